package dev.tidemark.translator;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.InvalidProtocolBufferException;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;

/**
 * The equivalence of the tree path ({@code
 * translate(ExportMetricsServiceRequest.parseFrom(bytes))}, the reference) and the in-place path
 * ({@code translate(bytes)}): same exception (class and message) or same {@link TranslationResult}
 * (counts per reason, examples, details, warnings, partial-success message, samples written), the
 * same appended samples (labels, metadata, timestamp, value bits, batch point), the same batches
 * and appender calls, the same delta streams and family metadata.
 */
final class Equivalence {
  private Equivalence() {}

  /** Two translators with one config and clock: the tree path and the in-place path. */
  static final class Twin {
    final RecordingAppender treeAppender;
    final Translator tree;
    final RecordingAppender appender;
    final Translator translator;
    int requests;
    long accepted;
    long rejected;
    int undecodable;
    final java.util.Map<RejectionReason, Integer> byReason =
        new java.util.EnumMap<>(RejectionReason.class);

    /**
     * @param rulesOf the appender whose rejection rules and availability both appenders follow
     */
    Twin(TranslatorConfig config, Clock clock, RecordingAppender rulesOf) {
      treeAppender = new RecordingAppender(rulesOf);
      tree = new Translator(treeAppender, config, clock);
      appender = new RecordingAppender(rulesOf);
      translator = new Translator(appender, config, clock);
    }

    /**
     * Translates {@code bytes} through both paths and checks they agree; returns the tree path's
     * result, or null if both threw (the same exception).
     */
    TranslationResult translateBoth(byte[] bytes) {
      requests++;
      int s0 = treeAppender.samples.size();
      int b0 = treeAppender.batchPointCounts.size();
      int c0 = treeAppender.calls;
      int s1 = appender.samples.size();
      int b1 = appender.batchPointCounts.size();
      int c1 = appender.calls;
      TranslationResult a = null;
      TranslationResult b = null;
      Exception ea = null;
      Exception eb = null;
      try {
        a = tree.translate(ExportMetricsServiceRequest.parseFrom(bytes));
      } catch (InvalidProtocolBufferException | RuntimeException e) {
        ea = e;
      }
      boolean walkWithKnownRuns = OtlpWire.isValid(bytes, 0, bytes.length, translator.knownRuns());
      try {
        b = translator.translate(bytes);
      } catch (InvalidProtocolBufferException | RuntimeException e) {
        eb = e;
      }
      String what = "request #" + requests + " (" + bytes.length + " bytes)";
      // The in-place path really ran: its walk accepts exactly what protobuf-java parses.
      assertThat(OtlpWire.isValid(bytes, 0, bytes.length))
          .as(what + ": walk verdict")
          .isEqualTo(!(ea instanceof InvalidProtocolBufferException));
      assertThat(walkWithKnownRuns)
          .as(what + ": walk verdict with known attribute runs")
          .isEqualTo(!(ea instanceof InvalidProtocolBufferException));
      if (a != null) {
        accepted += a.acceptedDataPoints();
        rejected += a.rejectedDataPoints();
        a.rejectedByReason().forEach((k, v) -> byReason.merge(k, v, Integer::sum));
      } else if (ea instanceof InvalidProtocolBufferException) {
        undecodable++;
      }
      assertThat(describe(eb)).as(what + ": exception").isEqualTo(describe(ea));
      assertThat(describe(b)).as(what + ": result").isEqualTo(describe(a));
      assertThat(new ArrayList<>(appender.samples.subList(s1, appender.samples.size())))
          .as(what + ": samples")
          .isEqualTo(
              new ArrayList<>(treeAppender.samples.subList(s0, treeAppender.samples.size())));
      assertThat(
              new ArrayList<>(
                  appender.batchPointCounts.subList(b1, appender.batchPointCounts.size())))
          .as(what + ": batches")
          .isEqualTo(
              new ArrayList<>(
                  treeAppender.batchPointCounts.subList(b0, treeAppender.batchPointCounts.size())));
      assertThat(appender.calls - c1)
          .as(what + ": appender calls")
          .isEqualTo(treeAppender.calls - c0);
      assertThat(translator.deltaStreamCount())
          .as(what + ": delta streams")
          .isEqualTo(tree.deltaStreamCount());
      assertThat(translator.metadata().size())
          .as(what + ": families")
          .isEqualTo(tree.metadata().size());
      return a;
    }
  }

  static String describe(Exception e) {
    return e == null ? "none" : e.getClass().getName() + ": " + e.getMessage();
  }

  static String describe(TranslationResult r) {
    if (r == null) {
      return "none";
    }
    List<String> l = new ArrayList<>();
    l.add(
        "total="
            + r.totalDataPoints()
            + " accepted="
            + r.acceptedDataPoints()
            + " rejected="
            + r.rejectedDataPoints()
            + " written="
            + r.samplesWritten()
            + " full="
            + r.isFullSuccess());
    for (RejectionReason reason : RejectionReason.values()) {
      if (r.rejected(reason) > 0) {
        l.add(
            reason
                + "="
                + r.rejected(reason)
                + " example="
                + r.exampleMetric(reason)
                + " detail="
                + r.detail(reason));
      }
    }
    l.add("warnings=" + r.warnings());
    l.add("message=" + r.partialSuccessMessage());
    return String.join("\n", l);
  }
}
