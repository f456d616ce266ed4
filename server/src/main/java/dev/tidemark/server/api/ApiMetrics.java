package dev.tidemark.server.api;

import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.core.metrics.Summary;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

/**
 * The query API's own metrics, under Prometheus' names with {@code tidemark_} for {@code
 * prometheus_}: {@code tidemark_http_request_duration_seconds{handler}} (a histogram with
 * Prometheus' buckets, the handler as Prometheus names its routes: {@code /api/v1/query}, {@code
 * /api/v1/label/:name/values}, {@code /federate}) and {@code
 * tidemark_engine_query_duration_seconds{slice}} (a summary of the PromQL queries' time waiting for
 * a slot, {@code queue_time}, and evaluating, {@code inner_eval}).
 */
final class ApiMetrics {
  final Histogram requestDuration =
      Histogram.builder()
          .name("tidemark_http_request_duration_seconds")
          .help("Latencies of the HTTP API's requests, by handler")
          .classicUpperBounds(0.1, 0.2, 0.4, 1, 3, 8, 20, 60, 120)
          .classicOnly()
          .labelNames("handler")
          .build();

  final Summary queryDuration =
      Summary.builder()
          .name("tidemark_engine_query_duration_seconds")
          .help("PromQL query timings, by slice (queue_time, inner_eval)")
          .quantile(0.5, 0.05)
          .quantile(0.9, 0.01)
          .quantile(0.99, 0.001)
          .labelNames("slice")
          .build();

  void register(PrometheusRegistry registry) {
    registry.register(requestDuration);
    registry.register(queryDuration);
  }

  /** Prometheus' handler label of an endpoint under {@code /api/v1/}. */
  static String handler(String routeName) {
    return routeName.equals("label_values")
        ? "/api/v1/label/:name/values"
        : PrometheusApi.PREFIX + routeName;
  }
}
