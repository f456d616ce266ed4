package dev.tidemark.translator;

/** The Prometheus TYPE of a metric family (contract §1.6). */
public enum PromType {
  COUNTER("counter"),
  GAUGE("gauge"),
  HISTOGRAM("histogram"),
  SUMMARY("summary"),
  UNKNOWN("unknown");

  private final String text;

  PromType(String text) {
    this.text = text;
  }

  /** The exposition-format word ({@code counter}, ...). */
  public String text() {
    return text;
  }
}
