package dev.tidemark.tsdb.query;

/**
 * A read stopped by its {@link QueryContext}: past its deadline or canceled. Nothing the read held
 * stays held; the caller answers it as Prometheus does (a timeout is HTTP 503 with {@code
 * errorType: timeout}, a cancellation {@code errorType: canceled}).
 */
public final class QueryAbortedException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** Why the read stopped. */
  public enum Reason {
    TIMEOUT("query timed out"),
    CANCELED("query was canceled");

    private final String message;

    Reason(String message) {
      this.message = message;
    }
  }

  private final Reason reason;

  public QueryAbortedException(Reason reason) {
    super(reason.message, null, false, false); // thrown across deep loops: no stack trace
    this.reason = reason;
  }

  public Reason reason() {
    return reason;
  }
}
