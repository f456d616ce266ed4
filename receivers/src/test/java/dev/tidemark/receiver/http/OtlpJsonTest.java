package dev.tidemark.receiver.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.tidemark.receiver.otlp.Otlp;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.metrics.v1.AggregationTemporality;
import io.opentelemetry.proto.metrics.v1.Exemplar;
import io.opentelemetry.proto.metrics.v1.Metric;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

class OtlpJsonTest {
  private static final String TRACE = "5B8EFFF798038103D269B633813FC60C";
  private static final String SPAN = "eee19b7ec3c1b174";

  @Test
  void hexTraceAndSpanIdsDecodeToTheirBytesNotAsBase64() throws Exception {
    ExportMetricsServiceRequest req = OtlpHttpHandler.parseJson(OtlpHttpHandlerTest.otlpJson());
    Metric counter = req.getResourceMetrics(0).getScopeMetrics(0).getMetrics(0);
    Exemplar ex = counter.getSum().getDataPoints(0).getExemplars(0);
    assertThat(ex.getTraceId().toByteArray()).hasSize(16).isEqualTo(HexFormat.of().parseHex(TRACE));
    assertThat(ex.getSpanId().toByteArray()).hasSize(8).isEqualTo(HexFormat.of().parseHex(SPAN));
  }

  @Test
  void otlpJsonQuirks() throws Exception {
    ExportMetricsServiceRequest req = OtlpHttpHandler.parseJson(OtlpHttpHandlerTest.otlpJson());
    var metrics = req.getResourceMetrics(0).getScopeMetrics(0).getMetricsList();
    assertThat(metrics).hasSize(3);
    // int64 as a string and as a number, enums as integers
    assertThat(metrics.get(0).getSum().getDataPoints(0).getTimeUnixNano()).isEqualTo(Otlp.T0);
    assertThat(metrics.get(0).getSum().getAggregationTemporality())
        .isEqualTo(AggregationTemporality.AGGREGATION_TEMPORALITY_CUMULATIVE);
    assertThat(metrics.get(1).getGauge().getDataPoints(0).getTimeUnixNano()).isEqualTo(Otlp.T0);
    assertThat(metrics.get(1).getGauge().getDataPoints(0).getAsInt()).isEqualTo(10);
    // bytesValue stays base64
    assertThat(
            metrics
                .get(1)
                .getGauge()
                .getDataPoints(0)
                .getAttributes(0)
                .getValue()
                .getBytesValue()
                .toStringUtf8())
        .isEqualTo("hello");
    assertThat(metrics.get(2).getHistogram().getDataPoints(0).getBucketCountsList())
        .containsExactly(1L, 1L, 1L);
    assertThat(metrics.get(2).getHistogram().getDataPoints(0).getCount()).isEqualTo(3);
  }

  @Test
  void rewriteTouchesOnlyIdValues() {
    assertThat(OtlpJson.hexIdsToBase64("{\"traceId\":\"0102\"}"))
        .isEqualTo("{\"traceId\":\"AQI=\"}");
    assertThat(OtlpJson.hexIdsToBase64("{ \"spanId\" :\n \"ff\" , \"x\":1}"))
        .isEqualTo("{ \"spanId\" :\n \"/w==\" , \"x\":1}");
    assertThat(OtlpJson.hexIdsToBase64("{\"trace_id\":\"00\",\"span_id\":\"FF\"}"))
        .isEqualTo("{\"trace_id\":\"AA==\",\"span_id\":\"/w==\"}");
    // Not keys, not hex, odd length, empty: unchanged (the same instance when nothing changes).
    String untouched =
        "{\"key\":\"traceId\",\"value\":{\"stringValue\":\"abcd\"},\"spanId\":\"xyz1\",\"traceId\":\"abc\","
            + "\"traceId\":\"\",\"s\":\"a \\\"traceId\\\": \\\"ab\\\"\",\"bytesValue\":\"abcd\"}";
    assertThat(OtlpJson.hexIdsToBase64(untouched)).isSameAs(untouched);
    // Unterminated text: left for the parser to reject.
    assertThat(OtlpJson.hexIdsToBase64("{\"traceId\":\"ab")).isEqualTo("{\"traceId\":\"ab");
    assertThat(OtlpJson.hexIdsToBase64("{\"traceId")).isEqualTo("{\"traceId");
  }

  @Test
  void invalidIdsAndMalformedJsonAreDecodeErrors() {
    assertThatThrownBy(
            () ->
                OtlpHttpHandler.parseJson(
                    "{\"resourceMetrics\":[{\"scopeMetrics\":[{\"metrics\":[{\"name\":\"x\",\"sum\":{\"dataPoints\":[{\"exemplars\":[{\"traceId\":\"not hex!\"}]}]}}]}]}]}"))
        .isInstanceOf(InvalidProtocolBufferException.class);
    assertThatThrownBy(() -> OtlpHttpHandler.parseJson("[1, 2]"))
        .isInstanceOf(InvalidProtocolBufferException.class);
    assertThatThrownBy(() -> OtlpHttpHandler.parseJson(""))
        .isInstanceOf(InvalidProtocolBufferException.class);
  }

  @Test
  void negativeZeroKeepsItsSignInEveryDoubleField() throws Exception {
    String json =
        """
        {"resourceMetrics": [{"resource": {"attributes": [{"key": "r", "value": {"doubleValue": -0.0}}]},
          "scopeMetrics": [{"metrics": [
            {"name": "g", "gauge": {"dataPoints": [
              {"timeUnixNano": "1", "asDouble": -0.0},
              {"timeUnixNano": "2", "asDouble": 0.0},
              {"timeUnixNano": "3", "asDouble": "-0"},
              {"timeUnixNano": "4", "asDouble": -0.5},
              {"timeUnixNano": "5", "as_double": -0E+3, "exemplars": [{"asDouble": -0.000}]},
              {"timeUnixNano": "6", "asInt": "-0"}]}},
            {"name": "h", "histogram": {"aggregationTemporality": 2, "dataPoints": [
              {"timeUnixNano": "1", "count": "1", "sum": -0.0, "min": -0, "max": 0,
               "bucketCounts": ["1", "0", "0"], "explicitBounds": [-1, -0.0], "unknown": -0.0}]}}
          ]}]}]}
        """;
    ExportMetricsServiceRequest req = OtlpHttpHandler.parseJson(json);
    var metrics = req.getResourceMetrics(0).getScopeMetrics(0).getMetricsList();
    var points = metrics.get(0).getGauge().getDataPointsList();
    assertThat(bits(points.get(0).getAsDouble())).isEqualTo(0x8000000000000000L);
    assertThat(bits(points.get(1).getAsDouble())).isZero();
    assertThat(bits(points.get(2).getAsDouble()))
        .as("numeric string")
        .isEqualTo(0x8000000000000000L);
    assertThat(points.get(3).getAsDouble()).isEqualTo(-0.5);
    assertThat(bits(points.get(4).getAsDouble()))
        .as("proto name, exponent")
        .isEqualTo(0x8000000000000000L);
    assertThat(bits(points.get(4).getExemplars(0).getAsDouble())).isEqualTo(0x8000000000000000L);
    assertThat(points.get(5).getAsInt()).isZero();
    var h = metrics.get(1).getHistogram().getDataPoints(0);
    assertThat(bits(h.getSum())).isEqualTo(0x8000000000000000L);
    assertThat(bits(h.getMin())).isEqualTo(0x8000000000000000L);
    assertThat(bits(h.getMax())).isZero();
    assertThat(bits(h.getExplicitBounds(1))).isEqualTo(0x8000000000000000L);
    assertThat(
            bits(
                req.getResourceMetrics(0)
                    .getResource()
                    .getAttributes(0)
                    .getValue()
                    .getDoubleValue()))
        .isEqualTo(0x8000000000000000L);
  }

  @Test
  void negativeZeroScanNeverThrowsOnBrokenText() {
    for (String s :
        new String[] {"-0", "[-0", "{\"a\": -0", "}}]]-0.0,,", "{\"a\":\"-0", "\"-0\":-0"}) {
      assertThat(OtlpJson.negativeZeros(s)).isNotNull();
    }
    assertThat(OtlpJson.negativeZeros("{\"a\": [1, {\"b\": -0.0}]}"))
        .singleElement()
        .satisfies(p -> assertThat(p).containsExactly("a", 1, "b"));
  }

  private static long bits(double d) {
    return Double.doubleToRawLongBits(d);
  }
}
