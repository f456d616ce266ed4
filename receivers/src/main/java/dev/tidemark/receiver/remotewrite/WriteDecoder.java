package dev.tidemark.receiver.remotewrite;

import dev.tidemark.translator.wire.WireReader;
import dev.tidemark.tsdb.codec.Varints;
import java.util.Arrays;

/**
 * Reads a remote-write request (1.0 {@code prometheus.WriteRequest} or 2.0 {@code
 * io.prometheus.write.v2.Request}, already decompressed) from its wire bytes into reusable arrays,
 * without building a message tree or a String per label.
 *
 * <p>What it keeps: per time series, its labels as a <em>label run</em> (for each label in wire
 * order: varint name length, name bytes, varint value length, value bytes, both copied into {@link
 * #runs}), its samples (timestamps and raw value bits into {@link #ts} and {@link #bits}), how many
 * native histograms and exemplars it carried, and for 2.0 its metadata references; for 1.0 the
 * request's metadata entries as byte ranges of the request. A run is the same bytes for the same
 * labels in the same order whichever version carried them, which is what the series cache keys on.
 *
 * <p>The wire is read with the shared {@link WireReader} (the OTLP walk's reader too). Protobuf
 * rules followed: fields in any order, unknown fields skipped by wire type, a known field with
 * another wire type is an error (as the generated Go decoders say), the last occurrence of a scalar
 * wins, every occurrence of a repeated field adds an element, {@code labels_refs} packed or not.
 * String bytes are not checked for UTF-8 here: a series with invalid UTF-8 is refused on its own by
 * the caller, as Prometheus does, instead of failing the request. Groups (wire types 3 and 4, which
 * no sender uses) are refused.
 *
 * <p>Not thread-safe; one per thread, reused: steady-state decoding allocates nothing.
 */
final class WriteDecoder {

  /** The wire cannot be read; the message says where and why. */
  static final class Malformed extends Exception {
    Malformed(String message) {
      super(message, null, false, false);
    }
  }

  private static final int VARINT = 0;
  private static final int I64 = 1;
  private static final int LEN = 2;
  private static final int I32 = 5;

  // ---- the decoded request (read by the caller after decode) ----

  /** The request bytes. */
  byte[] src;

  /** Number of time series. */
  int series;

  /** Per series: its label run in {@link #runs}, [runStart, runEnd). */
  int[] runStart = new int[64];

  int[] runEnd = new int[64];

  /** Per series: the number of labels (label pairs) in its run. */
  int[] labelCount = new int[64];

  /** Per series: its samples, [sampleStart, sampleEnd) into {@link #ts} and {@link #bits}. */
  int[] sampleStart = new int[64];

  int[] sampleEnd = new int[64];

  /**
   * Per series: native histograms and exemplars it carried (exemplars are not stored: counted). The
   * histograms of series {@code s} are messages {@code histogramFirst[s] ..} {@code +
   * histograms[s]} of {@link #histogramFrom}/{@link #histogramTo}, byte ranges of the request
   * ({@link WriteHistogramDecoder} reads each).
   */
  int[] histograms = new int[64];

  int[] histogramFirst = new int[64];

  /** Every histogram message of the request: its bytes are {@code src[from, to)}. */
  int[] histogramFrom = new int[16];

  int[] histogramTo = new int[16];

  /** Histogram messages in the request. */
  int histogramTotal;

  int[] exemplars = new int[64];

  /**
   * 2.0, per series: metadata type (the enum number), help and unit symbol references; {@code
   * badRef[s]} is a message if a label or metadata reference is out of range (the series is then
   * refused by itself).
   */
  int[] metaType = new int[64];

  int[] helpRef = new int[64];
  int[] unitRef = new int[64];
  String[] badRef = new String[64];

  /** Label runs of all series. */
  byte[] runs = new byte[4096];

  int runsLength;

  long[] ts = new long[256];
  long[] bits = new long[256];
  int samples;

  /**
   * 1.0 metadata entries: type (enum number) and byte ranges in {@link #src} of the family name,
   * help and unit ({@code [start, end)}; start = end = 0 when absent).
   */
  int metadata;

  int[] mdType = new int[8];
  int[] mdRanges = new int[8 * 6];

  /** 2.0 symbols: byte ranges in {@link #src}. */
  int symbols;

  int[] symStart = new int[256];
  int[] symEnd = new int[256];

  // ---- scratch ----

  /** The cursor over {@link #src}. */
  private final WireReader r = new WireReader();

  private int[] refs = new int[64];
  private int[] seriesFrom = new int[64];
  private int[] seriesTo = new int[64];

  // ---------------------------------------------------------------- 1.0

  /** Decodes a {@code prometheus.WriteRequest}. */
  void decodeV1(byte[] buf, int off, int len) throws Malformed {
    reset(buf, off);
    try {
      int end = off + len;
      while (r.pos < end) {
        int tag = r.tag(end);
        int field = tag >>> 3;
        if (field == 1 || field == 3) {
          int to =
              delimited(tag, end, field == 1 ? "WriteRequest.timeseries" : "WriteRequest.metadata");
          if (field == 1) {
            timeSeriesV1(to);
          } else {
            metadataV1(to);
          }
        } else {
          r.skip(tag, end);
        }
      }
    } catch (WireReader.Malformed e) {
      throw new Malformed(e.getMessage());
    }
  }

  private void timeSeriesV1(int end) {
    int s = newSeries();
    while (r.pos < end) {
      int tag = r.tag(end);
      int field = tag >>> 3;
      switch (field) {
        case 1 -> {
          labelV1(delimited(tag, end, "TimeSeries.labels"));
          labelCount[s]++;
        }
        case 2 -> sample(delimited(tag, end, "TimeSeries.samples"));
        case 3, 4 -> {
          int e =
              delimited(tag, end, field == 3 ? "TimeSeries.exemplars" : "TimeSeries.histograms");
          if (field == 3) {
            exemplars[s]++;
          } else {
            histogram(s, r.pos, e);
          }
          r.pos = e;
        }
        default -> r.skip(tag, end);
      }
    }
    closeSeries(s);
  }

  /** A Label message: appends name and value (the last occurrence of each wins) to the run. */
  private void labelV1(int end) {
    int nameAt = 0;
    int nameLen = 0;
    int valueAt = 0;
    int valueLen = 0;
    while (r.pos < end) {
      int tag = r.tag(end);
      int field = tag >>> 3;
      if (field == 1 || field == 2) {
        int to = delimited(tag, end, field == 1 ? "Label.name" : "Label.value");
        if (field == 1) {
          nameAt = r.pos;
          nameLen = to - r.pos;
        } else {
          valueAt = r.pos;
          valueLen = to - r.pos;
        }
        r.pos = to;
      } else {
        r.skip(tag, end);
      }
    }
    appendLabel(src, nameAt, nameLen, valueAt, valueLen);
  }

  private void metadataV1(int end) {
    if (metadata == mdType.length) {
      mdType = Arrays.copyOf(mdType, metadata * 2);
      mdRanges = Arrays.copyOf(mdRanges, metadata * 12);
    }
    int m = metadata++;
    mdType[m] = 0;
    Arrays.fill(mdRanges, m * 6, m * 6 + 6, 0);
    while (r.pos < end) {
      int tag = r.tag(end);
      int field = tag >>> 3;
      switch (field) {
        case 1 -> {
          expect(tag, WireReader.WT_VARINT, "MetricMetadata.type");
          mdType[m] = (int) r.varint(end);
        }
        case 2, 4, 5 -> {
          int to = delimited(tag, end, "MetricMetadata field " + field);
          int slot = m * 6 + (field == 2 ? 0 : field == 4 ? 2 : 4);
          mdRanges[slot] = r.pos;
          mdRanges[slot + 1] = to;
          r.pos = to;
        }
        default -> r.skip(tag, end);
      }
    }
  }

  // ---------------------------------------------------------------- 2.0

  /** Decodes an {@code io.prometheus.write.v2.Request}. */
  void decodeV2(byte[] buf, int off, int len) throws Malformed {
    reset(buf, off);
    try {
      int end = off + len;
      int tsCount = 0;
      // Symbols first (they may follow the series on the wire), series ranges remembered.
      while (r.pos < end) {
        int tag = r.tag(end);
        int field = tag >>> 3;
        if (field == 4 || field == 5) {
          int to = delimited(tag, end, field == 4 ? "Request.symbols" : "Request.timeseries");
          if (field == 4) {
            if (symbols == symStart.length) {
              symStart = Arrays.copyOf(symStart, symbols * 2);
              symEnd = Arrays.copyOf(symEnd, symbols * 2);
            }
            symStart[symbols] = r.pos;
            symEnd[symbols++] = to;
          } else {
            if (tsCount == seriesFrom.length) {
              seriesFrom = Arrays.copyOf(seriesFrom, tsCount * 2);
              seriesTo = Arrays.copyOf(seriesTo, tsCount * 2);
            }
            seriesFrom[tsCount] = r.pos;
            seriesTo[tsCount++] = to;
          }
          r.pos = to;
        } else {
          r.skip(tag, end);
        }
      }
      for (int i = 0; i < tsCount; i++) {
        r.pos = seriesFrom[i];
        timeSeriesV2(seriesTo[i]);
      }
    } catch (WireReader.Malformed e) {
      throw new Malformed(e.getMessage());
    }
  }

  private void timeSeriesV2(int end) {
    int s = newSeries();
    int nrefs = 0;
    while (r.pos < end) {
      int tag = r.tag(end);
      int field = tag >>> 3;
      switch (field) {
        case 1 -> {
          if ((tag & 7) == WireReader.WT_LEN) { // packed
            int e = r.length(end) + r.pos;
            while (r.pos < e) {
              nrefs = addRef(nrefs, r.varint(e));
            }
          } else {
            expect(tag, WireReader.WT_VARINT, "TimeSeries.labels_refs");
            nrefs = addRef(nrefs, r.varint(end));
          }
        }
        case 2 -> sample(delimited(tag, end, "TimeSeries.samples"));
        case 3, 4 -> {
          int e =
              delimited(tag, end, field == 3 ? "TimeSeries.histograms" : "TimeSeries.exemplars");
          if (field == 3) {
            histogram(s, r.pos, e);
          } else {
            exemplars[s]++;
          }
          r.pos = e;
        }
        case 5 -> metadataV2(s, delimited(tag, end, "TimeSeries.metadata"));
        default -> r.skip(tag, end);
      }
    }
    // Labels from the references, in wire order.
    if (nrefs % 2 != 0) {
      badRef[s] = "labels_refs has an odd number of entries (" + nrefs + ")";
    } else {
      for (int i = 0; i < nrefs && badRef[s] == null; i += 2) {
        int n = refs[i];
        int val = refs[i + 1];
        if (n < 0 || n >= symbols || val < 0 || val >= symbols) {
          badRef[s] =
              "labels_refs ("
                  + Integer.toUnsignedString(n < 0 || n >= symbols ? n : val)
                  + ") out of range of the "
                  + symbols
                  + " symbols";
        } else {
          appendLabel(
              src,
              symStart[n],
              symEnd[n] - symStart[n],
              symStart[val],
              symEnd[val] - symStart[val]);
          labelCount[s]++;
        }
      }
    }
    if (badRef[s] == null) {
      int h = helpRef[s];
      int u = unitRef[s];
      boolean badHelp = h != 0 && (h < 0 || h >= symbols);
      boolean badUnit = u != 0 && (u < 0 || u >= symbols);
      if (badHelp || badUnit) {
        badRef[s] =
            "metadata "
                + (badHelp ? "help_ref " : "unit_ref ")
                + Integer.toUnsignedString(badHelp ? h : u)
                + " out of range of the "
                + symbols
                + " symbols";
      }
    }
    if (badRef[s] != null) {
      labelCount[s] = 0;
      runEnd[s] = runStart[s];
      runsLength = runStart[s];
    }
    closeSeries(s);
  }

  private int addRef(int n, long ref) {
    if (n == refs.length) {
      refs = Arrays.copyOf(refs, n * 2);
    }
    refs[n] = ref > Integer.MAX_VALUE ? -1 : (int) ref;
    return n + 1;
  }

  private void metadataV2(int s, int end) {
    while (r.pos < end) {
      int tag = r.tag(end);
      int field = tag >>> 3;
      if (field == 1 || field == 3 || field == 4) {
        expect(tag, WireReader.WT_VARINT, "Metadata field " + field);
        long v = r.varint(end);
        int val = v > Integer.MAX_VALUE ? -1 : (int) v;
        if (field == 1) {
          metaType[s] = val;
        } else if (field == 3) {
          helpRef[s] = val;
        } else {
          unitRef[s] = val;
        }
      } else {
        r.skip(tag, end);
      }
    }
  }

  // ---------------------------------------------------------------- shared

  /** A Sample message (1.0 and 2.0 share fields 1 and 2; 2.0's start_timestamp is skipped). */
  private void sample(int end) {
    long t = 0;
    long b = 0;
    while (r.pos < end) {
      int tag = r.tag(end);
      int field = tag >>> 3;
      if (field == 1) {
        expect(tag, WireReader.WT_FIXED64, "Sample.value");
        b = r.fixed64(end);
      } else if (field == 2) {
        expect(tag, WireReader.WT_VARINT, "Sample.timestamp");
        t = r.varint(end);
      } else {
        r.skip(tag, end);
      }
    }
    if (samples == ts.length) {
      ts = Arrays.copyOf(ts, samples * 2);
      bits = Arrays.copyOf(bits, samples * 2);
    }
    ts[samples] = t;
    bits[samples++] = b;
  }

  private void reset(byte[] buf, int off) {
    src = buf;
    r.reset(buf, off);
    series = 0;
    runsLength = 0;
    samples = 0;
    histogramTotal = 0;
    metadata = 0;
    symbols = 0;
  }

  /** Notes a histogram message of series {@code s} at {@code src[from, to)}. */
  private void histogram(int s, int from, int to) {
    if (histogramTotal == histogramFrom.length) {
      histogramFrom = Arrays.copyOf(histogramFrom, histogramTotal * 2);
      histogramTo = Arrays.copyOf(histogramTo, histogramTotal * 2);
    }
    histogramFrom[histogramTotal] = from;
    histogramTo[histogramTotal++] = to;
    histograms[s]++;
  }

  private int newSeries() {
    if (series == runStart.length) {
      int c = series * 2;
      runStart = Arrays.copyOf(runStart, c);
      runEnd = Arrays.copyOf(runEnd, c);
      labelCount = Arrays.copyOf(labelCount, c);
      sampleStart = Arrays.copyOf(sampleStart, c);
      sampleEnd = Arrays.copyOf(sampleEnd, c);
      histograms = Arrays.copyOf(histograms, c);
      histogramFirst = Arrays.copyOf(histogramFirst, c);
      exemplars = Arrays.copyOf(exemplars, c);
      metaType = Arrays.copyOf(metaType, c);
      helpRef = Arrays.copyOf(helpRef, c);
      unitRef = Arrays.copyOf(unitRef, c);
      badRef = Arrays.copyOf(badRef, c);
    }
    int s = series++;
    runStart[s] = runsLength;
    labelCount[s] = 0;
    sampleStart[s] = samples;
    histograms[s] = 0;
    histogramFirst[s] = histogramTotal;
    exemplars[s] = 0;
    metaType[s] = 0;
    helpRef[s] = 0;
    unitRef[s] = 0;
    badRef[s] = null;
    return s;
  }

  private void closeSeries(int s) {
    runEnd[s] = runsLength;
    sampleEnd[s] = samples;
  }

  private void appendLabel(byte[] b, int nameAt, int nameLen, int valueAt, int valueLen) {
    int need = runsLength + nameLen + valueLen + 2 * Varints.MAX_BYTES;
    if (need > runs.length) {
      runs = Arrays.copyOf(runs, Math.max(need, runs.length * 2));
    }
    runsLength = Varints.put(runs, runsLength, nameLen);
    System.arraycopy(b, nameAt, runs, runsLength, nameLen);
    runsLength += nameLen;
    runsLength = Varints.put(runs, runsLength, valueLen);
    System.arraycopy(b, valueAt, runs, runsLength, valueLen);
    runsLength += valueLen;
  }

  // ---------------------------------------------------------------- fields

  /**
   * A length-delimited field whose tag was just read: checks its wire type and length. Its bytes
   * are {@code [r.pos, returned end)}; the caller moves {@code r.pos} past them or reads them.
   */
  private int delimited(int tag, int end, String field) {
    expect(tag, WireReader.WT_LEN, field);
    int n = r.length(end);
    return r.pos + n;
  }

  /** A known field must come with its declared wire type (as the generated Go decoders say). */
  private static void expect(int tag, int wanted, String field) {
    if ((tag & 7) != wanted) {
      throw new WireReader.Malformed("wrong wire type " + (tag & 7) + " for " + field);
    }
  }
}
