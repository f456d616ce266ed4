package dev.tidemark.translator;

import dev.tidemark.tsdb.append.AppendResult;
import dev.tidemark.tsdb.append.Appender;
import dev.tidemark.tsdb.append.RejectReason;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.append.StorageUnavailableException;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * A test appender: records the samples of accepted points, rejects on demand (a point is rejected
 * with the reason of its first matching sample, as the engine does) and can fail as a whole.
 */
final class RecordingAppender implements Appender {

  /** One sample; {@code histogram} is its native histogram, null for a float sample. */
  record Sample(
      Labels labels,
      MetricMetadata meta,
      long timestampMillis,
      long valueBits,
      int batchPoint,
      dev.tidemark.tsdb.model.NativeHistogram histogram) {
    double value() {
      return Double.longBitsToDouble(valueBits);
    }

    String name() {
      return labels.metricName();
    }
  }

  private record Rule(Predicate<Sample> when, RejectReason reason) {}

  final List<Sample> samples = new ArrayList<>();
  final List<Integer> batchPointCounts = new ArrayList<>();
  private final List<Rule> rules = new ArrayList<>();
  boolean unavailable;
  int calls;

  /** If set, this appender follows that one's rules and {@link #unavailable} flag (a twin). */
  private final RecordingAppender rulesOf;

  RecordingAppender() {
    this(null);
  }

  RecordingAppender(RecordingAppender rulesOf) {
    this.rulesOf = rulesOf;
  }

  RecordingAppender rejectWhen(Predicate<Sample> when, RejectReason reason) {
    rules.add(new Rule(when, reason));
    return this;
  }

  void clearRules() {
    rules.clear();
  }

  @Override
  public synchronized AppendResult append(SampleBatch batch) {
    calls++;
    List<Rule> rules = rulesOf != null ? rulesOf.rules : this.rules;
    if (rulesOf != null ? rulesOf.unavailable : unavailable) {
      throw new StorageUnavailableException("test: storage unavailable");
    }
    int points = batch.pointCount();
    batchPointCounts.add(points);
    RejectReason[] pointReasons = new RejectReason[points];
    RejectReason[] sampleReasons = new RejectReason[batch.size()];
    List<Sample> staged = new ArrayList<>();
    for (int i = 0; i < batch.size(); i++) {
      Sample s =
          new Sample(
              batch.labels(i),
              batch.metadata(i),
              batch.timestampMillis(i),
              batch.valueBits(i),
              batch.pointOf(i),
              batch.histogram(i));
      staged.add(s);
      for (Rule r : rules) {
        if (r.when().test(s)) {
          sampleReasons[i] = r.reason();
          if (pointReasons[s.batchPoint()] == null) {
            pointReasons[s.batchPoint()] = r.reason();
          }
          break;
        }
      }
    }
    for (Sample s : staged) {
      if (pointReasons[s.batchPoint()] == null) {
        samples.add(s);
      }
    }
    return new AppendResult(pointReasons, sampleReasons);
  }

  List<Sample> named(String name) {
    return samples.stream().filter(s -> name.equals(s.name())).toList();
  }

  Sample only(String name) {
    List<Sample> l = named(name);
    if (l.size() != 1) {
      throw new AssertionError(
          "expected one sample of " + name + ", got " + l + " among " + samples);
    }
    return l.get(0);
  }

  Sample find(String name, String label, String value) {
    return samples.stream()
        .filter(s -> name.equals(s.name()) && value.equals(s.labels().get(label)))
        .reduce((a, b) -> b)
        .orElseThrow(
            () -> new AssertionError("no " + name + "{" + label + "=" + value + "} in " + samples));
  }

  void clear() {
    samples.clear();
    batchPointCounts.clear();
  }
}
