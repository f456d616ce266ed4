package dev.tidemark.promql.engine;

/**
 * A query that did not produce a result. {@link #errorType()} is what the HTTP API reports as
 * Prometheus' {@code errorType}.
 */
public final class QueryException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** Prometheus' API error types that a query can produce. */
  public enum ErrorType {
    /** The query does not parse or its parameters are invalid ({@code bad_data}). */
    BAD_DATA("bad_data"),
    /** Evaluation failed, e.g. many-to-many matching or too many samples ({@code execution}). */
    EXECUTION("execution"),
    /** The deadline passed ({@code timeout}). */
    TIMEOUT("timeout"),
    /** The query was cancelled ({@code canceled}). */
    CANCELED("canceled");

    private final String apiName;

    ErrorType(String apiName) {
      this.apiName = apiName;
    }

    /** The {@code errorType} string of Prometheus' HTTP API. */
    public String apiName() {
      return apiName;
    }
  }

  private final ErrorType errorType;

  public QueryException(ErrorType errorType, String message) {
    super(message);
    this.errorType = errorType;
  }

  public QueryException(ErrorType errorType, String message, Throwable cause) {
    super(message, cause);
    this.errorType = errorType;
  }

  public ErrorType errorType() {
    return errorType;
  }

  static QueryException execution(String message) {
    return new QueryException(ErrorType.EXECUTION, message);
  }
}
