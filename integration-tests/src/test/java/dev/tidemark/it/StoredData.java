package dev.tidemark.it;

import dev.tidemark.rocksdb.RocksDbKvStore;
import dev.tidemark.tsdb.engine.Engine;
import dev.tidemark.tsdb.engine.EngineConfig;
import dev.tidemark.tsdb.model.IntegerHistogram;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.NativeHistogram;
import dev.tidemark.tsdb.query.HistogramIterator;
import dev.tidemark.tsdb.query.LabelMatcher;
import dev.tidemark.tsdb.query.SampleIterator;
import dev.tidemark.tsdb.query.Series;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * Everything a stopped server left in its data folder, read through the engine ({@link
 * RocksDbKvStore#open} + {@link Engine#open} + {@link Engine#select} over all time): series label
 * sets with their samples, values as raw IEEE-754 bits.
 */
final class StoredData {
  /** One stored sample; {@code bits} are the raw value bits. */
  record Sample(long t, long bits) {
    static Sample of(long t, double v) {
      return new Sample(t, Double.doubleToRawLongBits(v));
    }

    double value() {
      return Double.longBitsToDouble(bits);
    }

    @Override
    public String toString() {
      return t
          + "="
          + value()
          + (Double.isNaN(value()) ? "(0x" + Long.toHexString(bits) + ")" : "");
    }
  }

  private final Map<Labels, List<Sample>> series;

  /** Native histogram samples by series, each {@code t=count} ({@code t=stale} for a marker). */
  private final Map<Labels, List<String>> histograms;

  private StoredData(Map<Labels, List<Sample>> series, Map<Labels, List<String>> histograms) {
    this.series = series;
    this.histograms = histograms;
  }

  /** Reads the folder of a stopped server (the folder is locked while a server runs). */
  static StoredData read(Path dataDir) {
    Map<Labels, List<Sample>> out = new TreeMap<>();
    Map<Labels, List<String>> histograms = new TreeMap<>();
    try (RocksDbKvStore store = RocksDbKvStore.open(dataDir);
        Engine engine =
            Engine.open(store, EngineConfig.builder().retentionInterval(Duration.ZERO).build())) {
      for (Series s :
          engine
              .select(0, Long.MAX_VALUE, List.of(LabelMatcher.regex(Labels.METRIC_NAME, ".+")))
              .toList()) {
        List<Sample> samples = new ArrayList<>();
        SampleIterator it = s.iterator();
        while (it.next()) {
          samples.add(new Sample(it.timestampMillis(), it.valueBits()));
        }
        out.put(s.labels(), Collections.unmodifiableList(samples));
        List<String> h = new ArrayList<>();
        for (HistogramIterator hi = s.histogramIterator(); hi.next(); ) {
          NativeHistogram v = hi.histogram();
          h.add(
              hi.timestampMillis()
                  + "="
                  + (v.isStale()
                      ? "stale"
                      : v instanceof IntegerHistogram i
                          ? Long.toUnsignedString(i.count())
                          : v.toString()));
        }
        if (!h.isEmpty()) {
          histograms.put(s.labels(), Collections.unmodifiableList(h));
        }
      }
    }
    return new StoredData(
        Collections.unmodifiableMap(out), Collections.unmodifiableMap(histograms));
  }

  Map<Labels, List<Sample>> all() {
    return series;
  }

  /** The series of one metric name, by labels. */
  Map<Labels, List<Sample>> family(String metricName) {
    return select(l -> metricName.equals(l.metricName()));
  }

  Map<Labels, List<Sample>> select(Predicate<Labels> filter) {
    Map<Labels, List<Sample>> out = new TreeMap<>();
    series.forEach(
        (l, s) -> {
          if (filter.test(l)) {
            out.put(l, s);
          }
        });
    return out;
  }

  /** The native histogram samples of exactly {@code labels} ({@code t=count}), or null. */
  List<String> histograms(Labels labels) {
    return histograms.get(labels);
  }

  /** The samples of exactly {@code labels}, or null. */
  List<Sample> samples(Labels labels) {
    return series.get(labels);
  }

  /** A short listing of the stored series (for failure messages). */
  String describe(Predicate<Labels> filter) {
    return series.entrySet().stream()
        .filter(e -> filter.test(e.getKey()))
        .map(e -> e.getKey() + " " + e.getValue())
        .collect(Collectors.joining("\n  ", "stored:\n  ", "\n"));
  }

  @Override
  public String toString() {
    return describe(l -> true);
  }
}
