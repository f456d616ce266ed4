package dev.tidemark.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.tidemark.it.StoredData.Sample;
import dev.tidemark.tsdb.model.Labels;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * What the OpenTelemetry SDK exported, asked back through the Prometheus HTTP API of the running
 * server and compared with values worked out here from the expected samples: {@code
 * /api/v1/series}, {@code sum by}, {@code rate} (Prometheus' extrapolation, counter resets
 * included) and {@code histogram_quantile} over the converted histogram buckets.
 */
final class OtelSdkQueries {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static final long RANGE_MS = 60_000;

  private OtelSdkQueries() {}

  /** Checks the API's answers at {@code atMillis} (the last export) against {@code expected}. */
  static void check(ServerProcess server, Map<Labels, List<Sample>> expected, long atMillis)
      throws Exception {
    String at = Long.toString(atMillis / 1000) + "." + String.format("%03d", atMillis % 1000);

    // /api/v1/series: exactly the expected requests_total series
    JsonNode series = query(server, "/api/v1/series?match[]=" + enc("requests_total"));
    TreeSet<Labels> got = new TreeSet<>();
    for (JsonNode s : series.get("data")) {
      got.add(labels(s));
    }
    TreeSet<Labels> want = new TreeSet<>();
    for (Labels l : expected.keySet()) {
      if (l.metricName().equals("requests_total")) {
        want.add(l);
      }
    }
    assertThat(got).as("/api/v1/series").isEqualTo(want);

    // sum by (instance) (requests_total)
    Map<String, Double> sums = new TreeMap<>();
    for (Labels l : want) {
      sums.merge(l.get("instance"), valueAt(expected.get(l), atMillis), Double::sum);
    }
    assertThat(vector(server, "sum by (instance) (requests_total)", at, "instance"))
        .as("sum by (instance)")
        .isEqualTo(sums);

    // rate over the last minute, per series, as Prometheus extrapolates it
    Map<String, Double> rates = new TreeMap<>();
    for (Map.Entry<Labels, List<Sample>> e : expected.entrySet()) {
      if (e.getKey().metricName().equals("cpu_time_seconds_total")) {
        rates.put(e.getKey().get("instance"), rate(e.getValue(), atMillis, RANGE_MS));
      }
    }
    Map<String, Double> gotRates =
        vector(server, "rate(cpu_time_seconds_total[1m])", at, "instance");
    assertThat(gotRates.keySet()).isEqualTo(rates.keySet());
    for (String instance : rates.keySet()) {
      assertThat(gotRates.get(instance))
          .as("rate of %s", instance)
          .isCloseTo(rates.get(instance), within(rates.get(instance)));
    }

    // histogram_quantile over the explicit-bucket histogram's cumulative buckets
    Map<String, Double> quantiles = new TreeMap<>();
    Map<String, TreeMap<Double, Double>> buckets = new HashMap<>();
    for (Map.Entry<Labels, List<Sample>> e : expected.entrySet()) {
      if (e.getKey().metricName().equals("latency_seconds_bucket")) {
        String le = e.getKey().get("le");
        double bound = le.equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(le);
        buckets
            .computeIfAbsent(e.getKey().get("instance"), k -> new TreeMap<>())
            .put(bound, valueAt(e.getValue(), atMillis));
      }
    }
    for (Map.Entry<String, TreeMap<Double, Double>> e : buckets.entrySet()) {
      quantiles.put(e.getKey(), quantile(0.5, e.getValue()));
    }
    Map<String, Double> gotQ =
        vector(server, "histogram_quantile(0.5, latency_seconds_bucket)", at, "instance");
    assertThat(gotQ.keySet()).isEqualTo(quantiles.keySet());
    for (String instance : quantiles.keySet()) {
      assertThat(gotQ.get(instance))
          .as("median latency of %s", instance)
          .isCloseTo(quantiles.get(instance), within(quantiles.get(instance)));
    }
  }

  private static org.assertj.core.data.Offset<Double> within(double v) {
    return org.assertj.core.data.Offset.offset(Math.abs(v) * 1e-9 + 1e-12);
  }

  private static double valueAt(List<Sample> samples, long t) {
    double v = Double.NaN;
    for (Sample s : samples) {
      if (s.t() <= t && s.t() > t - 300_000) {
        v = Double.longBitsToDouble(s.bits());
      }
    }
    return v;
  }

  /** Prometheus' {@code extrapolatedRate} for a counter over {@code (t - range, t]}. */
  static double rate(List<Sample> all, long t, long range) {
    List<Sample> s = new ArrayList<>();
    for (Sample x : all) {
      if (x.t() > t - range && x.t() <= t) {
        s.add(x);
      }
    }
    if (s.size() < 2) {
      return Double.NaN;
    }
    double first = Double.longBitsToDouble(s.get(0).bits());
    double last = Double.longBitsToDouble(s.get(s.size() - 1).bits());
    double result = last - first;
    double prev = first;
    for (Sample x : s) {
      double v = Double.longBitsToDouble(x.bits());
      if (v < prev) {
        result += prev;
      }
      prev = v;
    }
    double rangeStart = (t - range) / 1000.0;
    double rangeEnd = t / 1000.0;
    double t1 = s.get(0).t() / 1000.0;
    double tn = s.get(s.size() - 1).t() / 1000.0;
    double durationToStart = t1 - rangeStart;
    double durationToEnd = rangeEnd - tn;
    double sampled = tn - t1;
    double average = sampled / (s.size() - 1);
    if (result > 0 && first >= 0) {
      double durationToZero = sampled * (first / result);
      if (durationToZero < durationToStart) {
        durationToStart = durationToZero;
      }
    }
    double threshold = average * 1.1;
    double extrapolateTo = sampled;
    extrapolateTo += durationToStart >= threshold ? average / 2 : durationToStart;
    extrapolateTo += durationToEnd >= threshold ? average / 2 : durationToEnd;
    return result * (extrapolateTo / sampled) / (range / 1000.0);
  }

  /** Prometheus' bucket quantile: linear interpolation inside the bucket holding the rank. */
  static double quantile(double q, TreeMap<Double, Double> cumulative) {
    double count = cumulative.lastEntry().getValue();
    double rank = q * count;
    double lower = 0;
    double below = 0;
    for (Map.Entry<Double, Double> b : cumulative.entrySet()) {
      if (b.getValue() >= rank) {
        if (Double.isInfinite(b.getKey())) {
          return lower;
        }
        double upper = b.getKey();
        return lower + (upper - lower) * ((rank - below) / (b.getValue() - below));
      }
      lower = b.getKey();
      below = b.getValue();
    }
    return Double.NaN;
  }

  private static Map<String, Double> vector(ServerProcess server, String expr, String at, String by)
      throws Exception {
    JsonNode r = query(server, "/api/v1/query?query=" + enc(expr) + "&time=" + at);
    assertThat(r.at("/data/resultType").asText()).isEqualTo("vector");
    Map<String, Double> out = new TreeMap<>();
    for (JsonNode s : r.at("/data/result")) {
      out.put(s.at("/metric/" + by).asText(), Double.parseDouble(s.at("/value/1").asText()));
    }
    return out;
  }

  private static JsonNode query(ServerProcess server, String pathAndQuery) throws Exception {
    HttpResponse<String> r =
        HTTP.send(
            HttpRequest.newBuilder(URI.create(server.apiUrl(pathAndQuery)))
                .timeout(Duration.ofSeconds(30))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as("%s: %s", pathAndQuery, r.body()).isEqualTo(200);
    return JSON.readTree(r.body());
  }

  private static Labels labels(JsonNode metric) {
    Labels.Builder b = Labels.builder();
    metric.fields().forEachRemaining(e -> b.add(e.getKey(), e.getValue().asText()));
    return b.build();
  }

  private static String enc(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }
}
