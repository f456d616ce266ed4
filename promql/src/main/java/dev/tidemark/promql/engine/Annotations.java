package dev.tidemark.promql.engine;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Warnings and infos of one query, as Prometheus' {@code annotations.Annotations}. Texts are
 * Prometheus' ({@code PromQL info: metric might not be a counter, ...}) and end in the position of
 * the expression they are about, like {@code (1:6)}. One message is kept once: Prometheus keys its
 * map by the text without the position (the query is only set when the API writes the answer), so
 * the same message raised at two places of a query is one annotation, with the position of the
 * later one. Kept in the order first seen (Prometheus' order is a Go map's, unspecified).
 */
public final class Annotations {
  private final Map<String, String> warnings = new LinkedHashMap<>();
  private final Map<String, String> infos = new LinkedHashMap<>();

  /**
   * A warning: {@code message} without position, the key; {@code text} the message with it, as the
   * answer shows it. A later text for the same message replaces the earlier one.
   */
  synchronized void warn(String message, String text) {
    warnings.put(message, text);
  }

  /** An info, keyed as {@link #warn(String, String)}. */
  synchronized void info(String message, String text) {
    infos.put(message, text);
  }

  public synchronized List<String> warnings() {
    return Collections.unmodifiableList(new ArrayList<>(warnings.values()));
  }

  public synchronized List<String> infos() {
    return Collections.unmodifiableList(new ArrayList<>(infos.values()));
  }

  public synchronized boolean isEmpty() {
    return warnings.isEmpty() && infos.isEmpty();
  }

  @Override
  public synchronized String toString() {
    return "warnings=" + warnings.values() + " infos=" + infos.values();
  }
}
