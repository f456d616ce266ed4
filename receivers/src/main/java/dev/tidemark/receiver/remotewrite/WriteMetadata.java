package dev.tidemark.receiver.remotewrite;

import static dev.tidemark.receiver.remotewrite.KnownSeries.utf8OrNull;

import dev.tidemark.tsdb.model.FamilyMetadata;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetadataRegistry;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.model.MetricType;
import dev.tidemark.tsdb.model.PromType;
import dev.tidemark.tsdb.model.Temporality;
import java.util.Arrays;

/**
 * Remote write's metadata: 1.0 {@code metadata} entries and 2.0 per-series metadata (type, help,
 * unit) are offered to the {@link MetadataRegistry} that {@code /api/v1/metadata} serves (first
 * registration of a family wins, as for OTLP); what is stored with a series (its ForwardIndex type
 * and unit) is derived from them and remembered in its {@link KnownSeries}. Thread-safe.
 */
final class WriteMetadata {
  /** The label Prometheus' type-and-unit-labels feature gives a series its metadata type. */
  static final String TYPE_LABEL = "__type__";

  /** The label Prometheus' type-and-unit-labels feature gives a series its metadata unit. */
  static final String UNIT_LABEL = "__unit__";

  private final MetadataRegistry registry;
  private final boolean typeAndUnitLabels;

  /**
   * @param typeAndUnitLabels give 2.0 series {@code __type__} and {@code __unit__} labels from
   *     their metadata ({@link #typedLabels})
   */
  WriteMetadata(MetadataRegistry registry, boolean typeAndUnitLabels) {
    this.registry = registry;
    this.typeAndUnitLabels = typeAndUnitLabels;
  }

  /** Offers a 1.0 request's metadata entries to the registry. */
  void offerV1(WriteDecoder d) {
    for (int m = 0; m < d.metadata; m++) {
      int[] r = d.mdRanges;
      int at = m * 6;
      String family = utf8OrNull(d.src, r[at], r[at + 1] - r[at]);
      if (family == null || family.isEmpty()) {
        continue;
      }
      String help = utf8OrNull(d.src, r[at + 2], r[at + 3] - r[at + 2]);
      String unit = utf8OrNull(d.src, r[at + 4], r[at + 5] - r[at + 4]);
      registry.offer(new FamilyMetadata(family, promType(d.mdType[m]), unit, help));
    }
  }

  /** A new valid series' first 1.0 metadata, looked up in the registry. */
  void remember(KnownSeries k) {
    k.meta = v1Meta(k.labels.metricName());
    k.lookedUpAt = registry.size();
  }

  /**
   * 1.0: what to store with the series. Senders send metadata apart from samples (Prometheus every
   * minute), so a series first seen before its family's metadata looks again whenever the registry
   * has grown; once found, it stays.
   */
  MetricMetadata forV1(KnownSeries k) {
    MetricMetadata m = k.meta;
    if (m == MetricMetadata.UNKNOWN) {
      int size = registry.size();
      if (size != k.lookedUpAt) {
        m = v1Meta(k.labels.metricName());
        k.meta = m;
        k.lookedUpAt = size;
      }
    }
    return m;
  }

  /** 1.0 series metadata: from the registry, by the family the name belongs to. */
  private MetricMetadata v1Meta(String name) {
    FamilyMetadata f = registry.get(name).or(() -> registry.get(familyOf(name))).orElse(null);
    return f == null ? MetricMetadata.UNKNOWN : seriesMetadata(f.type(), f.unit());
  }

  /**
   * 2.0: the metadata for this request's type/help/unit of series {@code s} (symbol references into
   * the request's symbol table) and the labels the series is written with, remembered until it
   * changes; a change is offered to the registry.
   */
  V2Meta forV2(KnownSeries k, WriteDecoder d, int s) {
    int type = d.metaType[s];
    int hr = d.helpRef[s];
    int ur = d.unitRef[s];
    byte[] src = d.src;
    int hFrom = hr < d.symbols ? d.symStart[hr] : 0;
    int hTo = hr < d.symbols ? d.symEnd[hr] : 0;
    int uFrom = ur < d.symbols ? d.symStart[ur] : 0;
    int uTo = ur < d.symbols ? d.symEnd[ur] : 0;
    V2Meta m = k.v2;
    if (m != null
        && m.type == type
        && Arrays.equals(m.help, 0, m.help.length, src, hFrom, hTo)
        && Arrays.equals(m.unit, 0, m.unit.length, src, uFrom, uTo)) {
      return m;
    }
    byte[] help = Arrays.copyOfRange(src, hFrom, hTo);
    byte[] unitBytes = Arrays.copyOfRange(src, uFrom, uTo);
    String unit = utf8OrNull(unitBytes, 0, unitBytes.length);
    String helpText = utf8OrNull(help, 0, help.length);
    PromType promType = promType(type);
    MetricMetadata meta = seriesMetadata(promType, unit == null ? "" : unit);
    V2Meta created =
        new V2Meta(
            type,
            help,
            unitBytes,
            meta,
            typeAndUnitLabels ? typedLabels(k.labels, promType, unit) : k.labels);
    k.v2 = created;
    if (type != 0 || help.length > 0 || unitBytes.length > 0) {
      String name = k.labels.metricName();
      boolean derived =
          promType == PromType.HISTOGRAM
              || promType == PromType.GAUGEHISTOGRAM
              || promType == PromType.SUMMARY;
      registry.offer(
          new FamilyMetadata(
              derived ? familyOf(name) : name,
              promType,
              unit == null ? "" : unit,
              helpText == null ? "" : helpText));
    }
    return created;
  }

  /**
   * A 2.0 series' labels under type-and-unit-labels, as Prometheus' write handler makes them: when
   * the metadata names a type other than unknown or a unit, the series' own {@code __type__} and
   * {@code __unit__} labels give way to {@code __type__} = the type's word ({@code counter}, {@code
   * gaugehistogram}, ...; none for unknown) and {@code __unit__} = the unit as sent (none when
   * empty); otherwise the labels stay as they are. A unit that is not UTF-8 is taken as none (our
   * labels hold strings; Prometheus would refuse the series as invalid).
   */
  static Labels typedLabels(Labels labels, PromType type, String unit) {
    boolean hasType = type != PromType.UNKNOWN;
    boolean hasUnit = unit != null && !unit.isEmpty();
    if (!hasType && !hasUnit) {
      return labels;
    }
    Labels.Builder b = labels.toBuilder().remove(TYPE_LABEL).remove(UNIT_LABEL);
    if (hasType) {
      b.set(TYPE_LABEL, type.text());
    }
    if (hasUnit) {
      b.set(UNIT_LABEL, unit);
    }
    return b.build();
  }

  /**
   * A 2.0 series' last metadata, as the bytes it came in, and the labels its samples are written
   * with (its own, or with type and unit labels).
   */
  record V2Meta(int type, byte[] help, byte[] unit, MetricMetadata meta, Labels labels) {}

  /** The Prometheus type of a metadata enum number (the same numbers in 1.0 and 2.0). */
  static PromType promType(int type) {
    return switch (type) {
      case 1 -> PromType.COUNTER;
      case 2 -> PromType.GAUGE;
      case 3 -> PromType.HISTOGRAM;
      case 4 -> PromType.GAUGEHISTOGRAM;
      case 5 -> PromType.SUMMARY;
      case 6 -> PromType.INFO;
      case 7 -> PromType.STATESET;
      default -> PromType.UNKNOWN;
    };
  }

  /** What is stored with a series of this remote-write type and unit. */
  static MetricMetadata seriesMetadata(PromType type, String unit) {
    return switch (type) {
      case COUNTER -> new MetricMetadata(MetricType.SUM, unit, Temporality.CUMULATIVE, true);
      case GAUGE -> new MetricMetadata(MetricType.GAUGE, unit, Temporality.UNSPECIFIED, false);
      case HISTOGRAM ->
          new MetricMetadata(MetricType.HISTOGRAM, unit, Temporality.CUMULATIVE, false);
      case SUMMARY -> new MetricMetadata(MetricType.SUMMARY, unit, Temporality.UNSPECIFIED, false);
      default ->
          unit.isEmpty()
              ? MetricMetadata.UNKNOWN
              : new MetricMetadata(MetricType.UNKNOWN, unit, Temporality.UNSPECIFIED, false);
    };
  }

  /**
   * The family a histogram's or summary's series belongs to: the name without {@code _bucket},
   * {@code _sum} or {@code _count}; the name itself if it has none of them.
   */
  static String familyOf(String name) {
    for (String suffix : new String[] {"_bucket", "_sum", "_count"}) {
      if (name.endsWith(suffix)) {
        return name.substring(0, name.length() - suffix.length());
      }
    }
    return name;
  }
}
