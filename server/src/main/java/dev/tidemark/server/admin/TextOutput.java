package dev.tidemark.server.admin;

import dev.tidemark.admin.v1.ApplyRetentionResponse;
import dev.tidemark.admin.v1.Bucket;
import dev.tidemark.admin.v1.BucketSeries;
import dev.tidemark.admin.v1.CompactResponse;
import dev.tidemark.admin.v1.CreateCheckpointResponse;
import dev.tidemark.admin.v1.DeleteSeriesResponse;
import dev.tidemark.admin.v1.FindSeriesResponse;
import dev.tidemark.admin.v1.FlushResponse;
import dev.tidemark.admin.v1.GetStatusResponse;
import dev.tidemark.admin.v1.Label;
import dev.tidemark.admin.v1.LabelNamesResponse;
import dev.tidemark.admin.v1.LabelValuesResponse;
import dev.tidemark.admin.v1.ListBucketsResponse;
import dev.tidemark.admin.v1.Sample;
import dev.tidemark.admin.v1.SeriesSamples;
import dev.tidemark.admin.v1.SetRetentionResponse;
import dev.tidemark.tsdb.model.PromText;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * {@code tidemark admin}'s human-readable output: tables with left-aligned columns, one line per
 * name, value or series, a sentence per action; series as {@code name{a="x", b="y"}}, durations and
 * floats in Prometheus' forms ({@link PromText}). A note that the server cut an answer at {@code
 * --limit} goes to standard error.
 */
final class TextOutput implements AdminOutput {
  private final PrintWriter out;
  private final PrintWriter err;

  TextOutput(PrintWriter out, PrintWriter err) {
    this.out = out;
    this.err = err;
  }

  @Override
  public void status(GetStatusResponse r) {
    List<String[]> rows = new ArrayList<>();
    rows.add(new String[] {"version", r.getVersion()});
    rows.add(new String[] {"started", TimeArgs.format(r.getStartTimeMs())});
    rows.add(new String[] {"uptime", PromText.formatDurationMillis(r.getUptimeMs() / 1000 * 1000)});
    rows.add(new String[] {"data folder", r.getDataDir()});
    rows.add(new String[] {"schema version", Integer.toString(r.getSchemaVersion())});
    rows.add(new String[] {"retention", r.getRetention()});
    rows.add(new String[] {"head series", Long.toString(r.getHeadSeries())});
    rows.add(new String[] {"head bytes", bytes(r.getHeadBytes())});
    rows.add(new String[] {"buckets", r.getBuckets() + " (" + r.getOpenBuckets() + " open)"});
    rows.add(new String[] {"samples ingested", Long.toString(r.getSamplesIngested())});
    rows.add(new String[] {"samples rejected", Long.toString(r.getSamplesRejected())});
    rows.add(new String[] {"bytes on disk", bytes(r.getBytesOnDisk())});
    if (r.hasHeadMaxTimeMs()) {
      rows.add(new String[] {"newest sample", TimeArgs.format(r.getHeadMaxTimeMs())});
    }
    table(out, null, rows);
    if (r.getSeriesPerBucketCount() > 0) {
      out.println();
      List<String[]> buckets = new ArrayList<>();
      for (BucketSeries b : r.getSeriesPerBucketList()) {
        buckets.add(
            new String[] {TimeArgs.format(b.getStartTimeMs()), Long.toString(b.getSeries())});
      }
      table(out, new String[] {"BUCKET", "SERIES"}, buckets);
    }
  }

  @Override
  public void buckets(ListBucketsResponse r) {
    List<String[]> rows = new ArrayList<>();
    for (Bucket b : r.getBucketsList()) {
      rows.add(
          new String[] {
            TimeArgs.format(b.getStartTimeMs()),
            PromText.formatDurationMillis(b.getSizeMs()),
            b.getOpen() ? "open" : "sealed",
            Long.toString(b.getSeriesCount()),
            bytes(b.getBytes())
          });
    }
    table(out, new String[] {"START", "SIZE", "STATE", "SERIES", "BYTES"}, rows);
  }

  @Override
  public void labelNames(LabelNamesResponse r) {
    r.getNamesList().forEach(out::println);
    truncated(r.getTruncated());
  }

  @Override
  public void labelValues(LabelValuesResponse r) {
    r.getValuesList().forEach(out::println);
    truncated(r.getTruncated());
  }

  @Override
  public void series(FindSeriesResponse r) {
    for (dev.tidemark.admin.v1.Series s : r.getSeriesList()) {
      out.println(formatLabels(s.getLabelsList()));
    }
    truncated(r.getTruncated());
  }

  @Override
  public SamplesOutput samples() {
    return new SampleTable(out);
  }

  @Override
  public void deleted(DeleteSeriesResponse r) {
    out.printf(
        Locale.ROOT,
        "deleted %d samples of %d series in %d buckets (%.3f s)%n",
        r.getSamples(),
        r.getSeries(),
        r.getBuckets(),
        r.getDurationMs() / 1000.0);
  }

  @Override
  public void flushed(FlushResponse r) {
    out.printf(
        Locale.ROOT,
        "sealed %d buckets (%d series) in %.3f s%n",
        r.getBucketsSealed(),
        r.getSeriesSealed(),
        r.getDurationMs() / 1000.0);
  }

  @Override
  public void compacted(CompactResponse r) {
    out.printf(
        Locale.ROOT,
        "compacted in %.3f s: %s on disk before, %s after%n",
        r.getDurationMs() / 1000.0,
        bytes(r.getBytesBefore()),
        bytes(r.getBytesAfter()));
  }

  @Override
  public void checkpointCreated(CreateCheckpointResponse r) {
    out.printf(
        Locale.ROOT,
        "checkpoint created in %s (%.3f s)%n",
        r.getPath(),
        r.getDurationMs() / 1000.0);
  }

  @Override
  public void retentionSet(SetRetentionResponse r) {
    out.println(
        "retention "
            + PromText.formatDurationMillis(r.getRetentionMs())
            + " (was "
            + PromText.formatDurationMillis(r.getPreviousRetentionMs())
            + ")");
  }

  @Override
  public void retentionApplied(ApplyRetentionResponse r) {
    out.printf(
        Locale.ROOT,
        "dropped %d buckets older than %s (%.3f s)%n",
        r.getBucketsDropped(),
        PromText.formatDurationMillis(r.getRetentionMs()),
        r.getDurationMs() / 1000.0);
  }

  /** A note on standard error when the server cut the answer at --limit. */
  private void truncated(boolean truncated) {
    if (truncated) {
      err.println("(truncated at --limit; more matched)");
    }
  }

  /**
   * {@code read}'s table: a series' labels, then one line per sample (time, milliseconds, value), a
   * blank line between series. Flushed at the end, not per line (picocli's standard out flushes on
   * every println: a write to the terminal or pipe per sample).
   */
  static final class SampleTable implements SamplesOutput {
    private final PrintWriter w;
    private final StringBuilder line = new StringBuilder(80);
    private List<Label> current;

    SampleTable(PrintWriter out) {
      this.w = new PrintWriter(out, false); // its println does not flush out
    }

    @Override
    public void add(SeriesSamples s) {
      if (!s.getLabelsList().equals(current)) {
        if (current != null) {
          w.println();
        }
        current = s.getLabelsList();
        w.println(formatLabels(current));
      }
      for (Sample sample : s.getSamplesList()) {
        line.setLength(0);
        line.append("  ")
            .append(TimeArgs.format(sample.getTimestampMs()))
            .append("  ")
            .append(sample.getTimestampMs())
            .append("  ")
            .append(formatValue(sample));
        w.println(line);
      }
    }

    @Override
    public void end() {}

    @Override
    public void flush() {
      w.flush();
    }
  }

  /**
   * {@code name{a="x", b="y"}}: the metric name, then the other labels as Prometheus' {@code
   * Labels.String()} writes a set ({@link PromText#formatLabels}); {@code {}} after a name alone.
   */
  static String formatLabels(List<Label> labels) {
    String name = null;
    List<String> rest = new ArrayList<>(2 * labels.size());
    for (Label l : labels) {
      if (l.getName().equals("__name__")) {
        name = l.getValue();
      } else {
        rest.add(l.getName());
        rest.add(l.getValue());
      }
    }
    String set = PromText.formatLabels(rest);
    return name == null ? set : name + set;
  }

  /** A sample's value as Go's {@code %g} (promtool's dump), {@code stale}, or NaN with its bits. */
  static String formatValue(Sample s) {
    if (s.getStale()) {
      return "stale";
    }
    double v = s.getValue();
    if (Double.isNaN(v)) {
      return "NaN (0x" + Long.toHexString(s.getValueBits()) + ")";
    }
    return PromText.formatFloat(v);
  }

  static String bytes(long n) {
    if (n < 1024) {
      return n + " B";
    }
    String[] units = {"KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = n;
    int u = -1;
    while (v >= 1024 && u < units.length - 1) {
      v /= 1024;
      u++;
    }
    return String.format(Locale.ROOT, "%.1f %s", v, units[u]);
  }

  /** Prints a table with left-aligned columns, two spaces apart. */
  static void table(PrintWriter out, String[] header, List<String[]> rows) {
    int cols = header != null ? header.length : rows.isEmpty() ? 0 : rows.get(0).length;
    int[] width = new int[cols];
    List<String[]> all = new ArrayList<>();
    if (header != null) {
      all.add(header);
    }
    all.addAll(rows);
    for (String[] r : all) {
      for (int i = 0; i < cols; i++) {
        width[i] = Math.max(width[i], r[i].length());
      }
    }
    for (String[] r : all) {
      StringBuilder sb = new StringBuilder();
      for (int i = 0; i < cols; i++) {
        if (i > 0) {
          sb.append("  ");
        }
        sb.append(r[i]);
        if (i < cols - 1) {
          sb.append(" ".repeat(width[i] - r[i].length()));
        }
      }
      out.println(sb);
    }
  }
}
