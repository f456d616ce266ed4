package dev.tidemark.server.api;

/**
 * An answer in Prometheus' error shape, {@code {"status":"error","errorType":…,"error":…}}, with
 * the HTTP status Prometheus gives each error type ({@code web/api/v1/api.go}, {@code
 * getDefaultErrorCode}).
 */
final class ApiError extends RuntimeException {

  /** Prometheus' error types, each with its API name and HTTP status. */
  enum Type {
    BAD_DATA("bad_data", 400),
    EXECUTION("execution", 422),
    CANCELED("canceled", 499),
    TIMEOUT("timeout", 503),
    INTERNAL("internal", 500),
    UNAVAILABLE("unavailable", 503),
    NOT_FOUND("not_found", 404),
    NOT_ACCEPTABLE("not_acceptable", 406);

    final String apiName;
    final int status;

    Type(String apiName, int status) {
      this.apiName = apiName;
      this.status = status;
    }
  }

  final Type type;

  ApiError(Type type, String message) {
    super(message, null, false, false);
    this.type = type;
  }

  static ApiError badData(String message) {
    return new ApiError(Type.BAD_DATA, message);
  }

  /** Prometheus' {@code invalidParamError}: {@code invalid parameter "start": …}. */
  static ApiError invalidParam(String parameter, String why) {
    return badData("invalid parameter \"" + parameter + "\": " + why);
  }
}
