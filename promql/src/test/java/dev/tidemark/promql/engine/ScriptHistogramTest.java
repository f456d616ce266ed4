package dev.tidemark.promql.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** The conformance runner's reading of native-histogram literals and series notation. */
class ScriptHistogramTest {

  @Test
  void readsEveryKey() {
    ScriptHistogram h =
        ScriptHistogram.parse(
            "{{schema:1 sum:-0.3 count:3.1 z_bucket:7.1 z_bucket_w:0.05 buckets:[5.1 10 7]"
                + " offset:-3 n_buckets:[4.1 5] n_offset:-5 counter_reset_hint:gauge}}");
    assertThat(h.schema).isEqualTo(1);
    assertThat(h.sum).isEqualTo(-0.3);
    assertThat(h.count).isEqualTo(3.1);
    assertThat(h.zeroCount).isEqualTo(7.1);
    assertThat(h.zeroThreshold).isEqualTo(0.05);
    assertThat(h.positive)
        .containsExactly(
            java.util.Map.entry(-3, 5.1),
            java.util.Map.entry(-2, 10.0),
            java.util.Map.entry(-1, 7.0));
    assertThat(h.negative)
        .containsExactly(java.util.Map.entry(-5, 4.1), java.util.Map.entry(-4, 5.0));
    assertThat(h.hint).isEqualTo(ScriptHistogram.Hint.GAUGE);
    assertThat(h.hintSet).isTrue();
    assertThat(h.customValues).isEmpty();

    ScriptHistogram c =
        ScriptHistogram.parse("{{schema:-53 custom_values:[-2 3] buckets:[1 0 2]}}");
    assertThat(c.usesCustomBuckets()).isTrue();
    assertThat(c.customValues).containsExactly(-2, 3);
    assertThat(ScriptHistogram.parse("{{}}").toString()).isEqualTo("{{schema:0 count:0 sum:0}}");
    assertThat(ScriptHistogram.parse("{{ }}").hintSet).isFalse();
  }

  @Test
  void rejectsBadLiterals() {
    assertThatThrownBy(() -> ScriptHistogram.parse("{{sum:1 sum:2}}"))
        .hasMessageContaining("duplicate key \"sum\"");
    assertThatThrownBy(() -> ScriptHistogram.parse("{{bukets:[1]}}"))
        .hasMessageContaining("unknown key \"bukets\"");
    assertThatThrownBy(() -> ScriptHistogram.parse("{{schema:9}}")).hasMessageContaining("-4…8");
    assertThatThrownBy(() -> ScriptHistogram.parse("{{counter_reset_hint:maybe}}"))
        .hasMessageContaining("maybe");
    assertThatThrownBy(() -> ScriptHistogram.parse("{{schema:1.5}}"))
        .hasMessageContaining("bad integer");
  }

  @Test
  void expandsSeriesNotation() {
    List<Object> v =
        PromqlConformanceRunner.parseValues(
            "1 {{sum:4 count:4 buckets:[1 2 1]}}+{{sum:2 count:3 buckets:[1 1 1]}}x2 _"
                + " {{count:1}}x1 stale");
    assertThat(v).hasSize(8);
    assertThat(v.get(0)).isEqualTo(1.0);
    assertThat(v.get(3)).isEqualTo(ScriptHistogram.parse("{{sum:8 count:10 buckets:[3 4 3]}}"));
    assertThat(v.get(4)).isNull();
    assertThat(v.get(5)).isSameAs(v.get(6));
    assertThat(Double.doubleToRawLongBits((Double) v.get(7)))
        .isEqualTo(dev.tidemark.tsdb.append.SampleBatch.STALE_NAN_BITS);

    List<Object> down =
        PromqlConformanceRunner.parseValues(
            "{{schema:0 sum:10 count:5 buckets:[2 3]}}-{{schema:0 sum:1 count:1 buckets:[1]}}x2");
    assertThat(down.get(2))
        .isEqualTo(ScriptHistogram.parse("{{schema:0 sum:8 count:3 buckets:[0 3]}}"));
    assertThat(
            ((ScriptHistogram) down.get(2))
                .matches(ScriptHistogram.parse("{{schema:0 sum:8 count:3 buckets:[3] offset:1}}")))
        .isTrue();
  }

  @Test
  void addsAFinerSchemaIntoTheBasesAndNeverTheOtherWay() {
    // Schema 0 buckets 1 and 2 fall into schema -1 bucket 1: ((idx - 1) >> 1) + 1.
    List<Object> v =
        PromqlConformanceRunner.parseValues(
            "{{schema:-1 sum:4 count:1 buckets:[1] offset:1}}+{{schema:0 sum:4 count:4 buckets:[2"
                + " 2] offset:1}}x1");
    ScriptHistogram sum = (ScriptHistogram) v.get(1);
    assertThat(sum.schema).isEqualTo(-1);
    assertThat(sum.positive).containsExactly(java.util.Map.entry(1, 5.0));
    assertThat(sum.count).isEqualTo(5);
    assertThatThrownBy(
            () -> PromqlConformanceRunner.parseValues("{{schema:0}}+{{schema:-1 buckets:[1]}}x1"))
        .hasMessageContaining("cannot merge from schema -1 to 0");
  }

  @Test
  void hintOfASeriesFollowsPrometheus() {
    List<Object> v =
        PromqlConformanceRunner.parseValues(
            "{{sum:2 count:2 counter_reset_hint:gauge}}+{{sum:1 count:3}}x1");
    ScriptHistogram second = (ScriptHistogram) v.get(1);
    assertThat(second.hint).isEqualTo(ScriptHistogram.Hint.GAUGE);
    // The "hint named" flag of every histogram in the series is the step literal's.
    assertThat(((ScriptHistogram) v.get(0)).hintSet).isFalse();
    assertThat(second.hintSet).isFalse();
  }

  @Test
  void convertsClassicBucketsAsLoadWithNhcb() {
    // operators.test: testhistogram_bucket{id="1"} at 10m is le=0.1: 10, le=0.2: 14, +Inf: 24.
    TreeMap<Double, Double> cumulative = new TreeMap<>();
    cumulative.put(0.1, 10.0);
    cumulative.put(0.2, 14.0);
    cumulative.put(Double.POSITIVE_INFINITY, 24.0);
    ScriptHistogram h = ScriptHistogram.customBuckets(cumulative, Double.NaN, Double.NaN, "t");
    assertThat(
            ScriptHistogram.parse(
                    "{{schema:-53 sum:0 count:24 buckets:[10 4 10] custom_values:[0.1 0.2]}}")
                .matches(h))
        .isTrue();
    TreeMap<Double, Double> broken = new TreeMap<>();
    broken.put(0.1, 5.0);
    broken.put(0.2, 4.0);
    assertThatThrownBy(() -> ScriptHistogram.customBuckets(broken, 4, 0, "t"))
        .hasMessageContaining("not cumulative");
  }

  @Test
  void knownFailuresListIsReadStrictly() {
    assertThat(KnownFailures.parse("# c\n\na.test:12 stable-other the reason here\n"))
        .containsOnlyKeys("a.test:12");
    assertThatThrownBy(() -> KnownFailures.parse("a.test:12 no-such-category why"))
        .hasMessageContaining("unknown category");
    assertThatThrownBy(() -> KnownFailures.parse("a.test:12 stable-other"))
        .hasMessageContaining("expected 'file:line category reason'");
    assertThatThrownBy(() -> KnownFailures.parse("a.test:1 stable-other x\na.test:1 annotations y"))
        .hasMessageContaining("listed twice");
  }
}
