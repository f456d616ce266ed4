package dev.tidemark.promql.engine;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Warnings and infos of one query, as Prometheus' {@code annotations.Annotations}: each text once,
 * in the order first seen. Texts are Prometheus' ({@code PromQL info: metric might not be a
 * counter, ...}) and end in the position of the expression they are about, like {@code (1:6)}.
 */
public final class Annotations {
  private final Set<String> warnings = new LinkedHashSet<>();
  private final Set<String> infos = new LinkedHashSet<>();

  synchronized void warn(String text) {
    warnings.add(text);
  }

  synchronized void info(String text) {
    infos.add(text);
  }

  public synchronized List<String> warnings() {
    return Collections.unmodifiableList(new ArrayList<>(warnings));
  }

  public synchronized List<String> infos() {
    return Collections.unmodifiableList(new ArrayList<>(infos));
  }

  public synchronized boolean isEmpty() {
    return warnings.isEmpty() && infos.isEmpty();
  }

  @Override
  public synchronized String toString() {
    return "warnings=" + warnings + " infos=" + infos;
  }
}
