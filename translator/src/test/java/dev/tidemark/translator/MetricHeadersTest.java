package dev.tidemark.translator;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.proto.metrics.v1.Metric;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class MetricHeadersTest {

  private static final byte[] BUF =
      "http.server.durationTime of a requestmsms2".getBytes(StandardCharsets.UTF_8);

  private static MetricHeaders.Key key(int unitAt, int unitLen, int field, int temp, boolean mono) {
    return key(BUF, 0, 20, 20, 17, unitAt, unitLen, field, temp, mono);
  }

  private static MetricHeaders.Key key(
      byte[] buf,
      int nameAt,
      int nameLen,
      int descAt,
      int descLen,
      int unitAt,
      int unitLen,
      int field,
      int temp,
      boolean mono) {
    MetricHeaders.Fields f = new MetricHeaders.Fields();
    f.nameAt = nameAt;
    f.nameLen = nameLen;
    f.descAt = descAt;
    f.descLen = descLen;
    f.unitAt = unitAt;
    f.unitLen = unitLen;
    f.dataField = field;
    f.temporality = temp;
    f.monotonic = mono;
    MetricHeaders.Key k = new MetricHeaders.Key();
    k.set(buf, f);
    return k;
  }

  @Test
  void theSameBytesFindTheSameHeader() {
    MetricHeaders headers = new MetricHeaders();
    Metric m = Metric.newBuilder().setName("http.server.duration").build();
    headers.put(key(37, 2, 7, 2, true), m);
    assertThat(headers.get(key(37, 2, 7, 2, true))).isSameAs(m);
    assertThat(headers.get(key(39, 2, 7, 2, true))).as("equal bytes elsewhere").isSameAs(m);
  }

  @Test
  void everyFieldOfTheHeaderIsPartOfTheKey() {
    MetricHeaders headers = new MetricHeaders();
    Metric m = Metric.newBuilder().setName("http.server.duration").build();
    headers.put(key(37, 2, 7, 2, true), m);
    assertThat(headers.get(key(37, 1, 7, 2, true))).as("unit").isNull();
    assertThat(headers.get(key(-1, 0, 7, 2, true))).as("no unit").isNull();
    assertThat(headers.get(key(37, 2, 5, 2, true))).as("data kind").isNull();
    assertThat(headers.get(key(37, 2, 7, 1, true))).as("temporality").isNull();
    assertThat(headers.get(key(37, 2, 7, 2, false))).as("monotonic").isNull();
    MetricHeaders.Key otherName = key(BUF, 0, 19, 20, 17, 37, 2, 7, 2, true);
    assertThat(headers.get(otherName)).as("name").isNull();
    MetricHeaders.Key nameIntoDescription = key(BUF, 0, 21, 21, 16, 37, 2, 7, 2, true);
    assertThat(headers.get(nameIntoDescription)).as("a byte moved between fields").isNull();
  }

  @Test
  void theBuiltHeaderHasTheFieldsAndAnEmptyDataMember() {
    MetricHeaders.Fields f = new MetricHeaders.Fields();
    f.clear();
    f.nameAt = 0;
    f.nameLen = 20;
    f.unitAt = 37;
    f.unitLen = 2;
    f.dataField = 7;
    f.temporality = 1;
    f.monotonic = true;
    Metric m = f.build(BUF, null);
    assertThat(m.getName()).isEqualTo("http.server.duration");
    assertThat(m.getDescription()).isEmpty();
    assertThat(m.getUnit()).isEqualTo("ms");
    assertThat(m.getSum().getAggregationTemporalityValue()).isEqualTo(1);
    assertThat(m.getSum().getIsMonotonic()).isTrue();
    assertThat(m.getSum().getDataPointsCount()).isZero();
  }

  @Test
  void anAbsentFieldIsTheEmptyOne() {
    MetricHeaders.Key absent = key(BUF, 0, 20, -1, 0, -1, 0, 5, 0, false);
    MetricHeaders.Key empty = key(BUF, 0, 20, 5, 0, 9, 0, 5, 0, false);
    MetricHeaders headers = new MetricHeaders();
    Metric m = Metric.newBuilder().setName("http.server.duration").build();
    headers.put(absent, m);
    assertThat(headers.get(empty)).isSameAs(m);
  }

  @Test
  void aLongHeaderGrowsTheScratch() {
    byte[] buf = ("m" + "d".repeat(1000)).getBytes(StandardCharsets.UTF_8);
    MetricHeaders.Key k = key(buf, 0, 1, 1, 1000, -1, 0, 5, 0, false);
    MetricHeaders headers = new MetricHeaders();
    Metric m = Metric.newBuilder().setName("m").build();
    headers.put(k, m);
    MetricHeaders.Key again = key(buf, 0, 1, 1, 1000, -1, 0, 5, 0, false);
    assertThat(headers.get(again)).isSameAs(m);
  }
}
