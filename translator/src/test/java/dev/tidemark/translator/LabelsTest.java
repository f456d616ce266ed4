package dev.tidemark.translator;

import static dev.tidemark.translator.Otlp.SEC;
import static dev.tidemark.translator.Otlp.T0;
import static dev.tidemark.translator.Otlp.T0_MS;
import static dev.tidemark.translator.Otlp.dp;
import static dev.tidemark.translator.Otlp.gauge;
import static dev.tidemark.translator.Otlp.kv;
import static dev.tidemark.translator.Otlp.request;
import static dev.tidemark.translator.Otlp.resourceMetrics;
import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.tsdb.model.Labels;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.ArrayValue;
import io.opentelemetry.proto.common.v1.InstrumentationScope;
import io.opentelemetry.proto.metrics.v1.ResourceMetrics;
import io.opentelemetry.proto.metrics.v1.ScopeMetrics;
import io.opentelemetry.proto.resource.v1.Resource;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LabelsTest extends TranslatorTestBase {

  @Test
  void collidingAttributesAreJoinedInKeyOrderWithAWarning() {
    // Given in reverse order: the join follows the byte order of the original keys ('.' < '_').
    TranslationResult r =
        translate(
            request(gauge("g", "", dp(T0, 1, kv("k8s_pod_name", "b"), kv("k8s.pod.name", "a")))));
    assertThat(appender.only("g").labels().get("k8s_pod_name")).isEqualTo("a;b");
    assertThat(r.rejectedDataPoints()).isZero();
    assertThat(r.isFullSuccess()).isFalse();
    assertThat(r.warnings())
        .singleElement()
        .asString()
        .contains("k8s.pod.name")
        .contains("k8s_pod_name");
    assertThat(r.partialSuccessMessage()).startsWith("warnings: ").contains("joined with \";\"");
  }

  @Test
  void attributeOrderDoesNotChangeTheSeries() {
    translate(request(gauge("g", "", dp(T0, 1, kv("a", "1"), kv("b", "2")))));
    translate(request(gauge("g", "", dp(T0 + SEC, 2, kv("b", "2"), kv("a", "1")))));
    assertThat(appender.named("g"))
        .extracting(RecordingAppender.Sample::labels)
        .containsOnly(appender.named("g").get(0).labels());
  }

  @Test
  void prometheusServerSanitisationDefaults() {
    translate(
        request(
            gauge(
                "g",
                "",
                dp(
                    T0,
                    1,
                    kv("_foo", "1"),
                    kv("2xx", "2"),
                    kv("a.-b", "3"),
                    kv("__x__", "4"),
                    kv("é", "5")))));
    Labels l = appender.only("g").labels();
    assertThat(l.get("key_foo")).isEqualTo("1");
    assertThat(l.get("key_2xx")).isEqualTo("2");
    assertThat(l.get("a__b")).isEqualTo("3");
    assertThat(l.get("__x__")).isEqualTo("4");
    assertThat(l.get("key_")).isEqualTo("5");
  }

  @Test
  void invalidLabelNameRejectsThePoint() {
    TranslationResult r =
        translate(request(gauge("g", "", dp(T0, 1, kv("___", "x")), dp(T0, 2, kv("ok", "x")))));
    assertThat(r.rejected(RejectionReason.INVALID_LABEL_NAME)).isEqualTo(1);
    assertThat(r.partialSuccessMessage()).contains("invalid name \"___\"");
    assertThat(appender.only("g").value()).isEqualTo(2);
  }

  @Test
  void attributeValuesAreRenderedAsPdataDoes() {
    translate(
        request(
            gauge(
                "g",
                "",
                dp(
                    T0,
                    1,
                    kv("b", AnyValue.newBuilder().setBoolValue(true).build()),
                    kv("i", AnyValue.newBuilder().setIntValue(-3).build()),
                    kv("d", AnyValue.newBuilder().setDoubleValue(1e-7).build()),
                    kv(
                        "arr",
                        AnyValue.newBuilder()
                            .setArrayValue(
                                ArrayValue.newBuilder()
                                    .addValues(AnyValue.newBuilder().setStringValue("x"))
                                    .addValues(AnyValue.newBuilder().setIntValue(2)))
                            .build()),
                    kv("empty", "")))));
    Labels l = appender.only("g").labels();
    assertThat(l.get("b")).isEqualTo("true");
    assertThat(l.get("i")).isEqualTo("-3");
    assertThat(l.get("d")).isEqualTo("1e-7");
    assertThat(l.get("arr")).isEqualTo("[\"x\",2]");
    assertThat(l.get("empty")).isNull();
  }

  @Test
  void jobAndInstanceFromTheResourceOverrideAttributes() {
    Resource res =
        Resource.newBuilder()
            .addAttributes(kv("service.name", "api"))
            .addAttributes(kv("service.namespace", "shop"))
            .addAttributes(kv("service.instance.id", "pod-1"))
            .build();
    translate(request(res, gauge("g", "", dp(T0, 1, kv("job", "mine"), kv("instance", "mine")))));
    Labels l = appender.only("g").labels();
    assertThat(l.get("job")).isEqualTo("shop/api");
    assertThat(l.get("instance")).isEqualTo("pod-1");
    assertThat(l.get("service_name")).isNull();
  }

  @Test
  void namespaceAloneGivesNoJob() {
    Resource res = Resource.newBuilder().addAttributes(kv("service.namespace", "shop")).build();
    translate(request(res, gauge("g", "", dp(T0, 1))));
    assertThat(appender.only("g").labels().get("job")).isNull();
    assertThat(appender.only("g").labels().get("instance")).isNull();
  }

  @Test
  void promotedResourceAttributesNeverOverrideDataPointAttributes() {
    reconfigure(
        TranslatorConfig.builder()
            .promoteResourceAttributes(List.of(" host.name ", "k8s.pod.name"))
            .build());
    Resource res =
        Otlp.defaultResource().toBuilder()
            .addAttributes(kv("k8s.pod.name", "from-resource"))
            .build();
    translate(request(res, gauge("g", "", dp(T0, 1, kv("k8s.pod.name", "from-point")))));
    Labels l = appender.only("g").labels();
    assertThat(l.get("host_name")).isEqualTo("h1");
    assertThat(l.get("k8s_pod_name")).isEqualTo("from-point");
    assertThat(appender.only("target_info").labels().get("k8s_pod_name"))
        .isEqualTo("from-resource");
  }

  @Test
  void promoteAllWithIgnoreList() {
    reconfigure(
        TranslatorConfig.builder()
            .promoteAllResourceAttributes(true)
            .ignoreResourceAttributes(List.of("host.name"))
            .build());
    translate(request(gauge("g", "", dp(T0, 1))));
    Labels l = appender.only("g").labels();
    assertThat(l.get("host_name")).isNull();
    assertThat(l.get("service_name")).isEqualTo("svc");
  }

  @Test
  void scopeLabelsOnByDefaultAndOffOnRequest() {
    ExportMetricsServiceRequest req =
        ExportMetricsServiceRequest.newBuilder()
            .addResourceMetrics(
                ResourceMetrics.newBuilder()
                    .setResource(Otlp.defaultResource())
                    .addScopeMetrics(
                        ScopeMetrics.newBuilder()
                            .setSchemaUrl("https://s")
                            .setScope(
                                InstrumentationScope.newBuilder()
                                    .setName("io.lib")
                                    .setVersion("2")
                                    .addAttributes(kv("otel_scope_name", "spoof"))
                                    .addAttributes(kv("tier", "x")))
                            .addMetrics(gauge("g", "", dp(T0, 1)))))
            .build();
    translate(req);
    Labels l = appender.only("g").labels();
    assertThat(l.get("otel_scope_name")).isEqualTo("io.lib");
    assertThat(l.get("otel_scope_version")).isEqualTo("2");
    assertThat(l.get("otel_scope_schema_url")).isEqualTo("https://s");
    assertThat(l.get("otel_scope_tier")).isEqualTo("x");

    appender.clear();
    reconfigure(TranslatorConfig.builder().promoteScopeMetadata(false).build());
    translate(req);
    assertThat(appender.only("g").labels().get("otel_scope_name")).isNull();
  }

  @Test
  void externalLabelsAreAddedWhenAbsent() {
    reconfigure(
        TranslatorConfig.builder().externalLabels(Map.of("cluster", "eu1", "pool", "ext")).build());
    translate(request(gauge("g", "", dp(T0, 1, kv("pool", "own")))));
    assertThat(appender.only("g").labels().get("cluster")).isEqualTo("eu1");
    assertThat(appender.only("g").labels().get("pool")).isEqualTo("own");
  }

  @Test
  void targetInfoCarriesNonIdentifyingResourceAttributes() {
    translate(request(gauge("g", "", dp(T0, 1, kv("a", "b")))));
    RecordingAppender.Sample ti = appender.only("target_info");
    assertThat(ti.labels())
        .isEqualTo(
            Labels.of(
                "__name__", "target_info", "host_name", "h1", "job", "svc", "instance", "i1"));
    assertThat(ti.value()).isEqualTo(1.0);
    assertThat(ti.timestampMillis()).isEqualTo(T0_MS);
    assertThat(translator.metadata().get("target_info").orElseThrow().help())
        .isEqualTo("Target metadata");
  }

  @Test
  void targetInfoKeepsIdentifyingAttributesWhenConfigured() {
    reconfigure(
        TranslatorConfig.builder().keepIdentifyingResourceAttributes(true).namespace("ns").build());
    translate(request(gauge("g", "", dp(T0, 1))));
    Labels l = appender.only("ns_target_info").labels();
    assertThat(l.get("service_name")).isEqualTo("svc");
    assertThat(l.get("service_instance_id")).isEqualTo("i1");
  }

  @Test
  void targetInfoSkippedWithOnlyIdentifyingAttributes() {
    Resource res =
        Resource.newBuilder()
            .addAttributes(kv("service.name", "svc"))
            .addAttributes(kv("service.instance.id", "i"))
            .build();
    translate(request(res, gauge("g", "", dp(T0, 1))));
    assertThat(appender.named("target_info")).isEmpty();
  }

  @Test
  void targetInfoSkippedWithoutJobOrInstance() {
    Resource res = Resource.newBuilder().addAttributes(kv("host.name", "h")).build();
    translate(request(res, gauge("g", "", dp(T0, 1))));
    assertThat(appender.named("target_info")).isEmpty();
  }

  @Test
  void targetInfoSkippedWhenTheResourceHasNoAcceptedPoints() {
    translate(request(gauge("g", "", dp(0, 1))));
    assertThat(appender.named("target_info")).isEmpty();
  }

  @Test
  void targetInfoEveryHalfLookbackDeltaPlusLatestAndDeduplicated() {
    // Points span 6 minutes: samples at 0, 2m30s, 5m, and the latest (6m).
    ExportMetricsServiceRequest one = request(gauge("g", "", dp(T0, 1), dp(T0 + 360 * SEC, 2)));
    ExportMetricsServiceRequest req =
        ExportMetricsServiceRequest.newBuilder()
            .addResourceMetrics(one.getResourceMetrics(0))
            .addResourceMetrics(
                resourceMetrics(Otlp.defaultResource(), gauge("h", "", dp(T0 + 360 * SEC, 3))))
            .build();
    clock.advance(Duration.ofMinutes(10));
    TranslationResult r = translate(req);
    assertThat(appender.named("target_info"))
        .extracting(RecordingAppender.Sample::timestampMillis)
        .containsExactly(T0_MS, T0_MS + 150_000, T0_MS + 300_000, T0_MS + 360_000);
    assertThat(r.totalDataPoints()).isEqualTo(3);
  }

  @Test
  void warnsWhenResourcesWithoutInstanceCollide() {
    Resource a =
        Resource.newBuilder()
            .addAttributes(kv("service.name", "svc"))
            .addAttributes(kv("host.name", "a"))
            .build();
    Resource b =
        Resource.newBuilder()
            .addAttributes(kv("service.name", "svc"))
            .addAttributes(kv("host.name", "b"))
            .build();
    ExportMetricsServiceRequest req =
        ExportMetricsServiceRequest.newBuilder()
            .addResourceMetrics(resourceMetrics(a, gauge("g", "", dp(T0, 1))))
            .addResourceMetrics(resourceMetrics(b, gauge("g", "", dp(T0, 2))))
            .build();
    assertThat(translate(req).warnings()).anyMatch(w -> w.contains("lack service.instance.id"));
    // Two ResourceMetrics of the same resource are not a collision.
    Resource same = Resource.newBuilder().addAttributes(kv("service.name", "svc2")).build();
    ExportMetricsServiceRequest split =
        ExportMetricsServiceRequest.newBuilder()
            .addResourceMetrics(resourceMetrics(same, gauge("g", "", dp(T0, 1))))
            .addResourceMetrics(resourceMetrics(same, gauge("h", "", dp(T0, 1))))
            .build();
    assertThat(translate(split).warnings()).noneMatch(w -> w.contains("lack service.instance.id"));
  }
}
