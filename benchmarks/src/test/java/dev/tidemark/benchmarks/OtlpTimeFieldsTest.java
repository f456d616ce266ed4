package dev.tidemark.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.metrics.v1.NumberDataPoint;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class OtlpTimeFieldsTest {

  private static List<NumberDataPoint> points(ExportMetricsServiceRequest r) {
    List<NumberDataPoint> out = new ArrayList<>();
    r.getResourceMetricsList()
        .forEach(
            rm ->
                rm.getScopeMetricsList()
                    .forEach(
                        sm ->
                            sm.getMetricsList()
                                .forEach(
                                    m -> {
                                      out.addAll(m.getGauge().getDataPointsList());
                                      out.addAll(m.getSum().getDataPointsList());
                                    })));
    return out;
  }

  @Test
  void shiftsEveryDataPointsTimeAndNothingElse() throws Exception {
    OtlpLoadDataset data = new OtlpLoadDataset(10, 8, 1_700_000_000_000L, 15_000, 5, 4);
    byte[] body = data.encode(1, 1).toByteArray();
    int[] at = OtlpTimeFields.offsets(body);
    List<NumberDataPoint> before = points(ExportMetricsServiceRequest.parseFrom(body));
    assertThat(at).hasSize(before.size());

    long delta = 8 * 15_000 * 1_000_000L;
    List<NumberDataPoint> after =
        points(ExportMetricsServiceRequest.parseFrom(OtlpTimeFields.shifted(body, at, delta)));
    assertThat(after).hasSameSizeAs(before);
    for (int i = 0; i < before.size(); i++) {
      NumberDataPoint want =
          before.get(i).toBuilder()
              .setTimeUnixNano(before.get(i).getTimeUnixNano() + delta)
              .build();
      assertThat(after.get(i)).isEqualTo(want);
    }
    assertThat(points(ExportMetricsServiceRequest.parseFrom(body))).isEqualTo(before); // a copy
  }
}
