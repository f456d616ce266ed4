package dev.tidemark.tsdb.model;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * Per-family metadata (TYPE, UNIT, HELP) of everything the translator has accepted, and the
 * name→TYPE registry that detects TYPE conflicts (contract §6).
 *
 * <p>A family claims its name and, for histograms and summaries, the derived series names ({@code
 * _bucket}, {@code _sum}, {@code _count}); a later family whose name or derived names are claimed
 * with a different TYPE is a conflict, so a gauge {@code foo_count} and a histogram {@code foo}
 * cannot both be written. For conflicting UNIT or HELP the first one is kept (S1).
 *
 * <p>Used by every receiver (OTLP through the translator, remote write directly) and served by
 * {@code /api/v1/metadata}. The engine's registry ({@code Engine.metadata()}) is loaded from the
 * store at open and told to persist each family the first time it is registered ({@code
 * docs/format.md}, Metadata): a registration is a new entry at most once per family, so the store
 * is written when metadata changes, not per request.
 *
 * <p>Thread-safe. Reads are lock-free; the first registration of a family takes a lock. Entries are
 * never removed (one tenant).
 */
public final class MetadataRegistry {
  private final ConcurrentHashMap<String, FamilyMetadata> families = new ConcurrentHashMap<>();

  /** Told of each family registered for the first time (not of restored ones); under the lock. */
  private final Consumer<FamilyMetadata> onNew;

  /** Series name → owning family (the family itself or a histogram/summary's derived name). */
  private final ConcurrentHashMap<String, FamilyMetadata> owners = new ConcurrentHashMap<>();

  private final Object lock = new Object();

  /** A registry kept in memory only. */
  public MetadataRegistry() {
    this(m -> {});
  }

  /**
   * @param onNew told of each family registered for the first time, under the registry's lock: it
   *     must not block (the engine queues the family for its background writer)
   */
  public MetadataRegistry(Consumer<FamilyMetadata> onNew) {
    this.onNew = Objects.requireNonNull(onNew, "onNew");
  }

  /**
   * Registers a family read back from the store, as {@link #register} does but without telling
   * {@code onNew}; a family that conflicts with one restored before is ignored.
   */
  public void restore(FamilyMetadata meta) {
    register(meta, false);
  }

  /** Metadata of a family, if it was ever accepted. */
  public Optional<FamilyMetadata> get(String family) {
    return Optional.ofNullable(families.get(family));
  }

  /** All families, sorted by name (a copy). */
  public Map<String, FamilyMetadata> snapshot() {
    return new TreeMap<>(families);
  }

  public int size() {
    return families.size();
  }

  /**
   * Registers metadata that came without data to check against it (remote write): the family is
   * registered unless its name or derived names are already claimed, in which case what is
   * registered stays (first wins, as for OTLP's UNIT and HELP).
   *
   * @return true if {@code meta} was registered or equals what is registered
   */
  public boolean offer(FamilyMetadata meta) {
    FamilyMetadata existing = families.get(meta.family());
    if (existing != null) {
      return existing.equals(meta);
    }
    return register(meta) == null;
  }

  /**
   * Registers {@code meta} or checks it against what is registered.
   *
   * @return null if compatible, else the metadata it conflicts with
   */
  public FamilyMetadata register(FamilyMetadata meta) {
    return register(meta, true);
  }

  private FamilyMetadata register(FamilyMetadata meta, boolean tell) {
    FamilyMetadata existing = families.get(meta.family());
    if (existing != null && existing.type() == meta.type()) {
      return null;
    }
    synchronized (lock) {
      existing = families.get(meta.family());
      if (existing != null) {
        return existing.type() == meta.type() ? null : existing;
      }
      String[] names = seriesNames(meta);
      for (String n : names) {
        FamilyMetadata owner = owners.get(n);
        if (owner != null
            && !(owner.family().equals(meta.family()) && owner.type() == meta.type())) {
          return owner;
        }
      }
      for (String n : names) {
        owners.put(n, meta);
      }
      families.put(meta.family(), meta);
      if (tell) {
        onNew.accept(meta);
      }
      return null;
    }
  }

  private static String[] seriesNames(FamilyMetadata m) {
    String f = m.family();
    return switch (m.type()) {
      case HISTOGRAM -> new String[] {f, f + "_bucket", f + "_sum", f + "_count"};
      case SUMMARY -> new String[] {f, f + "_sum", f + "_count"};
      default -> new String[] {f};
    };
  }
}
