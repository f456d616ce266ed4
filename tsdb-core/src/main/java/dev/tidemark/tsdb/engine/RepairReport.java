package dev.tidemark.tsdb.engine;

import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;

/**
 * What {@link StoreVerifier#repair} did: the problems before, what it changed, and a fresh
 * verification after. Immutable.
 *
 * @param before the verification the repair was planned from
 * @param actions how many of each change it wrote (only changes that happened)
 * @param after the verification after the repair; equal to {@code before} when it refused
 * @param refusal why nothing was written (a schema problem), or null
 */
public record RepairReport(
    VerifyReport before, Map<Action, Long> actions, VerifyReport after, String refusal) {

  /** The changes a repair makes. */
  public enum Action {
    BUCKETS_LISTED("buckets with records added to the BucketList"),
    BUCKETS_UNLISTED("buckets without readable records removed from the BucketList"),
    UNFINISHED_COMPACTIONS_DELETED("coarse buckets of interrupted compactions deleted"),
    STRAY_KEYS_DELETED("stray keys deleted"),
    RECORDS_DELETED("undecodable records deleted"),
    TIME_SERIES_DELETED("TimeSeries records without a ForwardIndex record deleted"),
    HEAD_LOG_RECORDS_REWRITTEN("HeadLog records rewritten without samples of unknown series"),
    HEAD_LOG_RECORDS_DELETED("HeadLog records deleted (only samples of unknown series)"),
    HEAD_CHUNKS_DELETED(
        "HeadChunk records without a ForwardIndex record deleted (recovery rebuilds them from the"
            + " head log)"),
    SAMPLES_DROPPED("samples dropped with them (their series have no ForwardIndex record)"),
    DICTIONARY_ENTRIES_WRITTEN("SeriesDictionary entries rebuilt from ForwardIndex records"),
    DICTIONARY_ENTRIES_DELETED("SeriesDictionary entries deleted (no series left)"),
    POSTINGS_WRITTEN("postings rewritten or rebuilt from ForwardIndex records"),
    POSTINGS_DELETED("postings deleted (no series left)");

    private final String description;

    Action(String description) {
      this.description = description;
    }

    public String description() {
      return description;
    }
  }

  public RepairReport {
    EnumMap<Action, Long> copy = new EnumMap<>(Action.class);
    copy.putAll(actions);
    actions = Collections.unmodifiableMap(copy);
  }

  /** Whether the store is consistent after the repair. */
  public boolean clean() {
    return after.clean();
  }

  /** The count of one action (0 if it did not happen). */
  public long count(Action a) {
    return actions.getOrDefault(a, 0L);
  }

  /** The changes as text, one per line; "nothing to change" if none. */
  public String formatActions() {
    if (refusal != null) {
      return "repair refused, nothing changed: " + refusal + "\n";
    }
    if (actions.isEmpty()) {
      return "nothing to change\n";
    }
    StringBuilder sb = new StringBuilder();
    for (Map.Entry<Action, Long> e : actions.entrySet()) {
      sb.append("  ")
          .append(e.getValue())
          .append("  ")
          .append(e.getKey().description())
          .append('\n');
    }
    return sb.toString();
  }
}
