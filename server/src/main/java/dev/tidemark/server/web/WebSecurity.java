package dev.tidemark.server.web;

/**
 * What a web configuration file puts in front of the listeners (the HTTP API, OTLP/HTTP,
 * OTLP/gRPC): one {@link WebTls} when the file has {@code tls_server_config}, one {@link BasicAuth}
 * always (open while it has no users). Both take a new file's settings while serving ({@link
 * #apply}); whether TLS is on is fixed at the start, as in Prometheus, since it decides what each
 * listener speaks. Thread-safe.
 */
public final class WebSecurity {

  private final WebTls tls;
  private final BasicAuth auth;
  private volatile WebConfig config;

  public WebSecurity(WebConfig config) {
    this.config = config;
    this.tls = config.hasTls() ? new WebTls(config.tls()) : null;
    this.auth = new BasicAuth(config.users());
  }

  /** The TLS context of every listener, or null: they speak plain HTTP and gRPC. */
  public WebTls tls() {
    return tls;
  }

  public BasicAuth auth() {
    return auth;
  }

  /** The configuration in force. */
  public WebConfig config() {
    return config;
  }

  /**
   * Why {@code next} cannot replace the configuration in force without a restart, or null: it turns
   * TLS on or off.
   */
  public String reloadProblem(WebConfig next) {
    if (next.hasTls() != (tls != null)) {
      return (tls != null
              ? "the web config file no longer has tls_server_config"
              : "the web config file now has tls_server_config")
          + ": TLS is turned on or off only by a restart (the listeners keep speaking "
          + (tls != null ? "TLS" : "plain HTTP and gRPC")
          + ")";
    }
    return null;
  }

  /**
   * Serves {@code next} from now on: its users for the next request, its certificate, key, client
   * CA and versions for the next handshake.
   *
   * @throws IllegalArgumentException if {@link #reloadProblem} names a problem
   */
  public void apply(WebConfig next) {
    String problem = reloadProblem(next);
    if (problem != null) {
      throw new IllegalArgumentException(problem);
    }
    if (tls != null) {
      tls.update(next.tls());
    }
    auth.users(next.users());
    config = next;
  }
}
