package dev.tidemark.server.api;

import java.io.IOException;
import java.util.List;

/**
 * A computed success answer, not yet written: its {@code data} is written straight to the response
 * by {@link #writeData}, followed by the annotations.
 */
interface Answer {

  /** Writes the value of {@code data}. */
  void writeData(ApiJson json) throws IOException;

  default List<String> warnings() {
    return List.of();
  }

  default List<String> infos() {
    return List.of();
  }

  /** An answer whose data is written by {@code data} with these warnings and infos. */
  static Answer of(DataWriter data, List<String> warnings, List<String> infos) {
    return new Answer() {
      @Override
      public void writeData(ApiJson json) throws IOException {
        data.write(json);
      }

      @Override
      public List<String> warnings() {
        return warnings;
      }

      @Override
      public List<String> infos() {
        return infos;
      }
    };
  }

  static Answer of(DataWriter data) {
    return of(data, List.of(), List.of());
  }

  /** Writes a {@code data} value. */
  interface DataWriter {
    void write(ApiJson json) throws IOException;
  }
}
