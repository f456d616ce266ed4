package dev.tidemark.tsdb.codec;

import static dev.tidemark.tsdb.codec.RecordCodecTestSupport.seed;
import static dev.tidemark.tsdb.codec.RecordCodecTestSupport.seedMsg;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.time.ZoneOffset;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class TimeBucketTest {

  private static final long MINUTE = 60_000L;

  /** The last millisecond of minute 2^32 - 1, the largest timestamp a bucket can hold. */
  private static final long MAX_TIMESTAMP = 0xFFFF_FFFFL * MINUTE + MINUTE - 1;

  @Test
  void oneHourBucketOfAKnownInstant() {
    long t = Instant.parse("2024-01-15T10:20:34.567Z").toEpochMilli();
    TimeBucket b = TimeBucket.containing(t, TimeBucket.ONE_HOUR);
    assertThat(b.sizeCode()).isEqualTo(1);
    assertThat(b.startMinutes()).isEqualTo(28_421_880); // 0x01B1AEF8, 2024-01-15T10:00Z
    assertThat(b.startMillis()).isEqualTo(Instant.parse("2024-01-15T10:00:00Z").toEpochMilli());
    assertThat(b.endMillis()).isEqualTo(Instant.parse("2024-01-15T11:00:00Z").toEpochMilli());
    assertThat(b.durationMillis()).isEqualTo(3_600_000L);
    assertThat(b.sizeHours()).isEqualTo(1);
    assertThat(b.next()).isEqualTo(new TimeBucket(1, 28_421_940));
  }

  @ParameterizedTest
  @ValueSource(ints = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
  void everySizeCode(int code) {
    int hours = 1 << (code - 1);
    long minutes = hours * 60L;
    TimeBucket b = new TimeBucket(code, (int) (minutes * 3));
    assertThat(b.sizeHours()).isEqualTo(hours);
    assertThat(b.durationMillis()).isEqualTo(hours * 3_600_000L);
    assertThat(b.endMillis() - b.startMillis()).isEqualTo(b.durationMillis());
    assertThat(b.next().startMillis()).isEqualTo(b.endMillis());
    // Edges: start and end-1 inside, start-1 and end outside.
    assertThat(TimeBucket.containing(b.startMillis(), code)).isEqualTo(b);
    assertThat(TimeBucket.containing(b.endMillis() - 1, code)).isEqualTo(b);
    assertThat(TimeBucket.containing(b.startMillis() - 1, code))
        .isEqualTo(new TimeBucket(code, (int) (minutes * 2)));
    assertThat(TimeBucket.containing(b.endMillis(), code)).isEqualTo(b.next());
    assertThat(b.contains(b.startMillis())).isTrue();
    assertThat(b.contains(b.endMillis())).isFalse();
    // Alignment: one minute off is rejected with the bad value in the message.
    assertThatThrownBy(() -> new TimeBucket(code, (int) (minutes * 3 + 1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(String.valueOf(minutes * 3 + 1));
    if (code > 1) {
      assertThatThrownBy(() -> new TimeBucket(code, (int) (minutes * 3 + minutes / 2)))
          .isInstanceOf(IllegalArgumentException.class);
    }
    assertThat(TimeBucket.containing(0, code)).isEqualTo(new TimeBucket(code, 0));
  }

  @ParameterizedTest
  @ValueSource(ints = {0, 16, -1, 255})
  void sizeCodeOutOfRange(int code) {
    assertThatThrownBy(() -> new TimeBucket(code, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(String.valueOf(code));
    assertThatThrownBy(() -> TimeBucket.containing(0, code))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void negativeTimestampsAreRejected() {
    assertThatThrownBy(() -> TimeBucket.containing(-1, 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("-1");
    assertThatThrownBy(() -> TimeBucket.containing(Long.MIN_VALUE, 1))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void unsignedMinutesReachTheYear10136() {
    // The first hour bucket at or past 2^31 minutes (the year 6053): its start is a negative int.
    long s = ((1L << 31) + 59) / 60 * 60;
    TimeBucket high = TimeBucket.containing(s * MINUTE + 5, 1);
    assertThat(high.startMinutes()).isNegative();
    assertThat(high.startMinutesUnsigned()).isEqualTo(s);
    assertThat(high.startMillis()).isEqualTo(s * MINUTE);
    assertThat(yearOf(high.startMillis())).isEqualTo(6053);

    // Crossing 2^31 with next(), and ordering across it: unsigned, not signed.
    TimeBucket below = new TimeBucket(1, (int) (s - 60));
    assertThat(below.startMinutes()).isPositive();
    assertThat(below.next()).isEqualTo(high);
    assertThat(below).isLessThan(high);
    TimeBucket y2100 =
        TimeBucket.containing(Instant.parse("2100-06-01T00:00:00Z").toEpochMilli(), 1);
    assertThat(y2100.compareTo(high)).isNegative();
    assertThat(yearOf(y2100.startMillis())).isEqualTo(2100);

    // The last representable millisecond.
    assertThat(yearOf(MAX_TIMESTAMP)).isEqualTo(10136);
    TimeBucket last = TimeBucket.containing(MAX_TIMESTAMP, 1);
    assertThat(last.startMinutesUnsigned()).isEqualTo(0xFFFF_FFFFL - 0xFFFF_FFFFL % 60);
    assertThat(last.endMillis()).isGreaterThan(MAX_TIMESTAMP);
    assertThatThrownBy(last::next).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> TimeBucket.containing(MAX_TIMESTAMP + 1, 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(String.valueOf(MAX_TIMESTAMP + 1));
    assertThatThrownBy(() -> TimeBucket.containing(Long.MAX_VALUE, 1))
        .isInstanceOf(IllegalArgumentException.class);
    for (int code = 1; code <= 15; code++) {
      TimeBucket b = TimeBucket.containing(MAX_TIMESTAMP, code);
      assertThat(b.contains(MAX_TIMESTAMP)).as("code %d", code).isTrue();
      assertThat(b.startMinutesUnsigned() % b.durationMinutes()).isZero();
    }
  }

  @Test
  void compareToIsUnsignedStartThenSizeCode() {
    TimeBucket a = new TimeBucket(1, 60);
    TimeBucket b = new TimeBucket(2, 0);
    TimeBucket c = new TimeBucket(1, 0);
    TimeBucket high = new TimeBucket(1, (int) 2_147_483_700L); // 2^31 + 52 minutes: a negative int
    assertThat(c).isLessThan(b); // same start, smaller code first
    assertThat(b).isLessThan(a); // start first
    assertThat(a).isLessThan(high);
    assertThat(c.compareTo(new TimeBucket(1, 0))).isZero();
  }

  @Test
  void randomTimestampsLandInTheirBucket() {
    long seed = seed();
    SplittableRandom r = new SplittableRandom(seed);
    for (int i = 0; i < 20_000; i++) {
      long t = r.nextLong(MAX_TIMESTAMP + 1);
      int code = 1 + r.nextInt(15);
      TimeBucket b = TimeBucket.containing(t, code);
      String msg = seedMsg(seed, i) + ", t=" + t + ", code=" + code;
      assertThat(b.contains(t)).as(msg).isTrue();
      assertThat(b.startMillis() % b.durationMillis()).as(msg).isZero();
      assertThat(b.startMinutesUnsigned()).as(msg).isLessThanOrEqualTo(0xFFFF_FFFFL);
    }
  }

  private static int yearOf(long millis) {
    return Instant.ofEpochMilli(millis).atZone(ZoneOffset.UTC).getYear();
  }
}
