package dev.tidemark.tsdb.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.tidemark.tsdb.codec.CorruptRecordException;
import dev.tidemark.tsdb.model.CounterResetHint;
import dev.tidemark.tsdb.model.HistogramLayout;
import dev.tidemark.tsdb.model.IntegerHistogram;
import dev.tidemark.tsdb.model.NativeHistogram;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * HeadLog format {@code 0x03}, the native histogram samples of an append ({@code docs/format.md},
 * HeadLog): golden bytes both ways, truncations and bad entries refused.
 */
class HeadLogHistogramsTest {

  static final long T = 1_705_312_815_000L; // 2024-01-15T10:00:15Z

  /** Schema 0, one positive bucket (index 1, (1, 2]) holding 1, sum 1.5. */
  static final IntegerHistogram ONE =
      IntegerHistogram.of(
          HistogramLayout.exponential(0, 0.0, new int[] {1, 1}, null),
          CounterResetHint.UNKNOWN,
          1,
          0,
          1.5,
          new long[] {1},
          null);

  /** The stale marker: sum {@link NativeHistogram#STALE_SUM_BITS}, no buckets. */
  static final IntegerHistogram STALE =
      IntegerHistogram.ofBits(
          HistogramLayout.exponential(0, 0.0, null, null),
          CounterResetHint.UNKNOWN,
          0,
          0,
          NativeHistogram.STALE_SUM_BITS,
          new long[0],
          new long[0]);

  /**
   * Produced by this class's encoder and checked by hand against docs/format.md (HeadLog format
   * 0x03, histogram chunk): series 7 with {@link #ONE} at T, series 300 with {@link #STALE} at T +
   * 15 s.
   */
  static final String GOLDEN =
      "03 07 10 01 98 8f c2 e4 d0 31 00 10 c3 0a 16 22 bf fc 20"
          + " ac 02 12 01 b0 84 c3 e4 d0 31 00 01 3f f8 00 00 00 00 00 01 00";

  @Test
  void golden() {
    HeadLogHistograms log = new HeadLogHistograms();
    log.add(7, T, ONE);
    log.add(300, T + 15_000, STALE);
    byte[] v = log.toByteArray();
    assertThat(HexFormat.ofDelimiter(" ").formatHex(v)).isEqualTo(GOLDEN);
    assertThat(decode(v))
        .containsExactly("7@" + T + "=" + ONE, "300@" + (T + 15_000) + "=" + STALE);
    log.clear();
    assertThat(log.isEmpty()).isTrue();
  }

  @Test
  void refusesCorruptValues() {
    byte[] good = HexFormat.ofDelimiter(" ").parseHex(GOLDEN);
    for (int len = 2; len < good.length; len++) {
      byte[] cut = java.util.Arrays.copyOf(good, len);
      if (len == 1 + 1 + 1 + good[2]) {
        continue; // exactly the first entry: a valid value of one entry
      }
      assertThatThrownBy(() -> decode(cut))
          .as("cut at %d", len)
          .isInstanceOf(CorruptRecordException.class);
    }
    assertThatThrownBy(() -> decode(new byte[0]))
        .isInstanceOf(CorruptRecordException.class)
        .hasMessageContaining("0x03");
    assertThatThrownBy(() -> decode(new byte[] {2}))
        .isInstanceOf(CorruptRecordException.class)
        .hasMessageContaining("0x03");
    // an entry whose stream holds two samples
    dev.tidemark.tsdb.codec.HistogramEncoder two = new dev.tidemark.tsdb.codec.HistogramEncoder();
    two.append(T, ONE);
    two.append(T + 1, ONE);
    byte[] stream = two.toByteArray();
    byte[] v = new byte[3 + stream.length];
    v[0] = 3;
    v[1] = 7;
    v[2] = (byte) stream.length;
    System.arraycopy(stream, 0, v, 3, stream.length);
    assertThatThrownBy(() -> decode(v))
        .isInstanceOf(CorruptRecordException.class)
        .hasMessageContaining("2 samples, not 1");
  }

  static List<String> decode(byte[] v) {
    List<String> out = new ArrayList<>();
    HeadLogHistograms.decode(v, (id, t, h) -> out.add(id + "@" + t + "=" + h));
    return out;
  }
}
