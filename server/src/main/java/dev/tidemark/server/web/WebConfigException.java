package dev.tidemark.server.web;

/** A web configuration file that cannot be used; the message names the file, key and value. */
public final class WebConfigException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  WebConfigException(String message) {
    super(message);
  }
}
