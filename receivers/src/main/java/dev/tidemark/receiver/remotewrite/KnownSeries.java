package dev.tidemark.receiver.remotewrite;

import dev.tidemark.tsdb.codec.Varints;
import dev.tidemark.tsdb.model.LabelStrings;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.model.PromText;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A label run seen before (see {@link WriteDecoder}), validated: its bytes, its labels (null if
 * invalid, with {@link #invalid} saying what they were) and the metadata remembered for it by
 * {@link WriteMetadata}.
 *
 * <p><b>Validation</b> is Prometheus' {@code labels.IsValid} with UTF-8 names: strict UTF-8, a
 * non-empty {@code __name__}, no empty label name, no name twice. The labels are sorted, and empty
 * values dropped (Prometheus treats them as absent).
 */
final class KnownSeries {
  final byte[] run;
  final Labels labels;
  final String invalid;

  // What WriteMetadata remembers for the series (read and written only there).

  /**
   * 1.0: from the registry (see {@link WriteMetadata#forV1}); 2.0: the last metadata seen ({@link
   * #v2}).
   */
  volatile MetricMetadata meta;

  /** 1.0: the registry's size when {@link #meta} was looked up while still unknown. */
  volatile int lookedUpAt;

  volatile WriteMetadata.V2Meta v2;

  private String text;

  private KnownSeries(byte[] run, Labels labels, String invalid) {
    this.run = run;
    this.labels = labels;
    this.invalid = invalid;
  }

  /** Decodes and validates a run of {@code count} labels. */
  static KnownSeries of(byte[] run, int count) {
    long[] v = new long[1];
    List<String> pairs = new ArrayList<>(2 * count);
    boolean valid = true;
    boolean hasName = false;
    Set<String> names = new HashSet<>();
    String duplicate = null;
    int p = 0;
    while (p < run.length) {
      String[] nv = new String[2];
      for (int j = 0; j < 2; j++) {
        p = Varints.read(run, p, run.length, v);
        int l = (int) v[0];
        String str = utf8OrNull(run, p, l);
        if (str == null) {
          valid = false;
          str = new String(run, p, l, StandardCharsets.UTF_8);
        }
        nv[j] = str;
        p += l;
      }
      if (nv[0].isEmpty()) {
        valid = false;
      }
      if (nv[0].equals(Labels.METRIC_NAME)) {
        hasName = !nv[1].isEmpty();
      }
      if (!names.add(nv[0]) && duplicate == null) {
        duplicate = nv[0];
      }
      pairs.add(nv[0]);
      pairs.add(nv[1]);
    }
    if (!valid || !hasName) {
      return new KnownSeries(run, null, PromText.formatLabels(pairs));
    }
    if (duplicate != null) {
      return new KnownSeries(
          run, null, PromText.formatLabels(pairs) + ", duplicated label " + duplicate);
    }
    Labels.Builder b = Labels.builder();
    for (int i = 0; i < pairs.size(); i += 2) {
      b.add(LabelStrings.share(pairs.get(i)), LabelStrings.share(pairs.get(i + 1)));
    }
    return new KnownSeries(run, b.build(), null);
  }

  /** The labels in Prometheus' notation, for messages. */
  String text() {
    String t = text;
    if (t == null) {
      List<String> pairs = new ArrayList<>();
      for (int i = 0; i < labels.size(); i++) {
        pairs.add(labels.name(i));
        pairs.add(labels.value(i));
      }
      t = PromText.formatLabels(pairs);
      text = t;
    }
    return t;
  }

  /** The bytes as strict UTF-8, or null if they are not. */
  static String utf8OrNull(byte[] b, int off, int len) {
    if (len == 0) {
      return "";
    }
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(b, off, len))
          .toString();
    } catch (CharacterCodingException e) {
      return null;
    }
  }
}
