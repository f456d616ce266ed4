package dev.tidemark.translator;

/**
 * The Prometheus TYPE of a metric family (contract §1.6). The translator makes the first four and
 * {@code unknown}; {@code gaugehistogram}, {@code info} and {@code stateset} come only from remote
 * write metadata.
 */
public enum PromType {
  COUNTER("counter"),
  GAUGE("gauge"),
  HISTOGRAM("histogram"),
  SUMMARY("summary"),
  UNKNOWN("unknown"),
  GAUGEHISTOGRAM("gaugehistogram"),
  INFO("info"),
  STATESET("stateset");

  private final String text;

  PromType(String text) {
    this.text = text;
  }

  /** The exposition-format word ({@code counter}, ...). */
  public String text() {
    return text;
  }
}
