package dev.tidemark.tsdb.kv;

/** A storage operation failed (I/O error, corruption reported by the store, ...). */
public class KvStoreException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public KvStoreException(String message) {
    super(message);
  }

  public KvStoreException(String message, Throwable cause) {
    super(message, cause);
  }
}
