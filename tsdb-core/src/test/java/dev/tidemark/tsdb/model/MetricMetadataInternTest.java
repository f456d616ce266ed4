package dev.tidemark.tsdb.model;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class MetricMetadataInternTest {

  @Test
  void equalMetadataShareOneInstanceAndUnequalDoNot() {
    MetricMetadata a = new MetricMetadata(MetricType.SUM, "s", Temporality.CUMULATIVE, true);
    MetricMetadata b = new MetricMetadata(MetricType.SUM, "s", Temporality.CUMULATIVE, true);
    MetricMetadata c = new MetricMetadata(MetricType.SUM, "By", Temporality.CUMULATIVE, true);
    assertThat(b).isNotSameAs(a).isEqualTo(a);
    MetricMetadata.Pool pool = new MetricMetadata.Pool(10);
    MetricMetadata ia = pool.intern(a);
    assertThat(pool.intern(b)).isSameAs(ia);
    assertThat(pool.intern(c)).isNotSameAs(ia).isEqualTo(c);
    assertThat(MetricMetadata.intern(b)).isEqualTo(a); // the shared pool
  }

  @Test
  void thePoolIsBoundedAndAValueBeyondItIsItself() {
    MetricMetadata.Pool pool = new MetricMetadata.Pool(3);
    MetricMetadata[] kept = new MetricMetadata[3];
    for (int i = 0; i < 3; i++) {
      kept[i] = pool.intern(gauge("u" + i));
    }
    MetricMetadata late = gauge("beyond the bound");
    assertThat(pool.intern(late)).isSameAs(late);
    assertThat(pool.intern(gauge("beyond the bound"))).isNotSameAs(late);
    assertThat(pool.intern(gauge("u1"))).isSameAs(kept[1]);
  }

  private static MetricMetadata gauge(String unit) {
    return new MetricMetadata(MetricType.GAUGE, unit, Temporality.UNSPECIFIED, false);
  }
}
