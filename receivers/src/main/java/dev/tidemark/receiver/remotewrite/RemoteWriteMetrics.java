package dev.tidemark.receiver.remotewrite;

import dev.tidemark.receiver.Outcome;
import dev.tidemark.receiver.remotewrite.RemoteWriteIngestor.Version;
import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.core.datapoints.DistributionDataPoint;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.Unit;

/**
 * The remote-write receiver's metrics ({@code tidemark_remote_write_*}), their data points looked
 * up once per version, reason and outcome so that a request only increments. Thread-safe.
 */
final class RemoteWriteMetrics {
  static final double[] DURATION_BUCKETS = {
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10
  };

  private final CounterDataPoint[] received = new CounterDataPoint[2];
  private final CounterDataPoint[] written = new CounterDataPoint[2];
  private final CounterDataPoint[][] refused = new CounterDataPoint[2][];
  private final CounterDataPoint[][] requests = new CounterDataPoint[2][];
  private final DistributionDataPoint[] duration = new DistributionDataPoint[2];

  RemoteWriteMetrics(PrometheusRegistry registry) {
    Counter receivedC =
        Counter.builder()
            .name("tidemark_remote_write_samples_received_total")
            .help("Remote-write samples in requests that could be decoded.")
            .labelNames("version")
            .register(registry);
    Counter writtenC =
        Counter.builder()
            .name("tidemark_remote_write_samples_written_total")
            .help("Remote-write samples written durably.")
            .labelNames("version")
            .register(registry);
    Counter refusedC =
        Counter.builder()
            .name("tidemark_remote_write_samples_refused_total")
            .help(
                "Remote-write samples refused (reported to the sender in a 400 answer), by"
                    + " reason.")
            .labelNames("version", "reason")
            .register(registry);
    Counter requestsC =
        Counter.builder()
            .name("tidemark_remote_write_requests_total")
            .help("Remote-write requests by outcome.")
            .labelNames("version", "outcome")
            .register(registry);
    Histogram durationH =
        Histogram.builder()
            .name("tidemark_remote_write_request_duration_seconds")
            .help("Remote-write request latency, from receipt to acknowledgement.")
            .unit(Unit.SECONDS)
            .labelNames("version")
            .classicOnly()
            .classicUpperBounds(DURATION_BUCKETS)
            .register(registry);
    for (Version v : Version.values()) {
      int i = v.ordinal();
      received[i] = receivedC.labelValues(v.label());
      written[i] = writtenC.labelValues(v.label());
      duration[i] = durationH.labelValues(v.label());
      Refusals.Reason[] rs = Refusals.Reason.values();
      refused[i] = new CounterDataPoint[rs.length];
      for (Refusals.Reason r : rs) {
        refused[i][r.ordinal()] = refusedC.labelValues(v.label(), r.label);
      }
      Outcome[] os = Outcome.values();
      requests[i] = new CounterDataPoint[os.length];
      for (Outcome o : os) {
        requests[i][o.ordinal()] = requestsC.labelValues(v.label(), o.label());
      }
    }
  }

  void received(Version v, long samples) {
    received[v.ordinal()].inc(samples);
  }

  /** The samples written and those refused, by reason. */
  void written(Version v, long samples, Refusals refusals) {
    int i = v.ordinal();
    written[i].inc(samples);
    for (int r = 0; r < refusals.byReason.length; r++) {
      if (refusals.byReason[r] > 0) {
        refused[i][r].inc(refusals.byReason[r]);
      }
    }
  }

  /** One request ended with {@code o} after {@code seconds}. */
  void request(Version v, Outcome o, double seconds) {
    int i = v.ordinal();
    requests[i][o.ordinal()].inc();
    duration[i].observe(seconds);
  }
}
