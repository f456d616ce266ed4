package dev.tidemark.tsdb.codec;

import static dev.tidemark.tsdb.codec.RecordCodecTestSupport.corruptOrDecodes;
import static dev.tidemark.tsdb.codec.RecordCodecTestSupport.hex;
import static dev.tidemark.tsdb.codec.RecordCodecTestSupport.randomString;
import static dev.tidemark.tsdb.codec.RecordCodecTestSupport.seed;
import static dev.tidemark.tsdb.codec.RecordCodecTestSupport.seedMsg;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.dynatrace.hash4j.hashing.HashValue128;
import com.dynatrace.hash4j.hashing.Hashing;
import dev.tidemark.tsdb.kv.KeyRanges;
import dev.tidemark.tsdb.model.Labels;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * Golden vectors, decoders, corruption and ordering of the RFC 0001 keys.
 *
 * <p>How the golden vectors were produced: derived by hand from the layouts in {@code
 * docs/format.md} (version 01, tag = type nibble | size-code nibble, big-endian time_bucket and
 * series id), for the bucket 2024-01-15T10:00Z, 1 hour: 1705312800000 ms / 60000 = 28421880 minutes
 * = 0x01B1AEF8. The fingerprint is hash4j {@code Hashing.xxh3_128()} over the canonical bytes shown
 * in {@link #FINGERPRINT_CANONICAL} (checked in {@link #fingerprintGolden()}). The same hex is in
 * docs/format.md. Never regenerate: a change here is a format change (bump the version).
 */
class KeysTest {

  static final TimeBucket BUCKET = new TimeBucket(1, 28_421_880); // 2024-01-15T10:00Z, 1 h
  static final Labels LABELS = Labels.of("__name__", "requests_total", "job", "api");

  /** {@code __name__ FF requests_total FF job FF api FF}. */
  static final String FINGERPRINT_CANONICAL =
      "5f 5f 6e 61 6d 65 5f 5f ff 72 65 71 75 65 73 74 73 5f 74 6f 74 61 6c ff 6a 6f 62 ff 61 70 69"
          + " ff";

  static final long FP_HIGH = 0xbde6ce16c9dc7b8fL;
  static final long FP_LOW = 0x0b34b0ae4304e670L;

  static final String BUCKET_LIST = "01 10";
  static final String SCHEMA = "01 70";
  static final String SERIES_DICTIONARY =
      "01 21 01 b1 ae f8 bd e6 ce 16 c9 dc 7b 8f 0b 34 b0 ae 43 04 e6 70";
  static final String FORWARD_INDEX = "01 31 01 b1 ae f8 00 00 00 07";
  static final String TIME_SERIES = "01 51 01 b1 ae f8 00 00 00 07";
  static final String INVERTED_INDEX = "01 41 01 b1 ae f8 6a 6f 62 00 61 70 69"; // job=api
  static final String INVERTED_INDEX_ALL = "01 41 01 b1 ae f8 00";
  static final String INVERTED_INDEX_JOB_PREFIX = "01 41 01 b1 ae f8 6a 6f 62 00";

  /** Name "a\u0000b\u0001" (61 00 62 01 → 61 01 01 62 01 02 00), value "x". */
  static final String INVERTED_INDEX_ESCAPED = "01 41 01 b1 ae f8 61 01 01 62 01 02 00 78";

  // ------------------------------------------------------------------------------ golden vectors

  @Test
  void fingerprintGolden() {
    assertThat(hex(LABELS.canonicalBytes())).isEqualTo(FINGERPRINT_CANONICAL);
    HashValue128 h = Hashing.xxh3_128().hashBytesTo128Bits(hex(FINGERPRINT_CANONICAL));
    assertThat(h.getMostSignificantBits()).isEqualTo(FP_HIGH);
    assertThat(h.getLeastSignificantBits()).isEqualTo(FP_LOW);
    assertThat(LABELS.fingerprintHigh()).isEqualTo(FP_HIGH);
    assertThat(LABELS.fingerprintLow()).isEqualTo(FP_LOW);
  }

  @Test
  void globalKeysGolden() {
    assertThat(hex(Keys.bucketList())).isEqualTo(BUCKET_LIST);
    assertThat(Keys.recordType(hex(BUCKET_LIST))).isEqualTo(RecordType.BUCKET_LIST);
    assertThat(hex(Keys.schema())).isEqualTo(SCHEMA);
    assertThat(Keys.recordType(hex(SCHEMA))).isEqualTo(RecordType.SCHEMA);
    // Fresh arrays: callers may keep or change them.
    assertThat(Keys.bucketList()).isNotSameAs(Keys.bucketList());
  }

  @Test
  void seriesDictionaryGolden() {
    assertThat(hex(Keys.seriesDictionary(BUCKET, FP_HIGH, FP_LOW))).isEqualTo(SERIES_DICTIONARY);
    assertThat(hex(Keys.seriesDictionary(BUCKET, LABELS))).isEqualTo(SERIES_DICTIONARY);
    byte[] k = hex(SERIES_DICTIONARY);
    assertThat(Keys.recordType(k)).isEqualTo(RecordType.SERIES_DICTIONARY);
    assertThat(Keys.timeBucket(k)).isEqualTo(BUCKET);
    assertThat(Keys.fingerprintHigh(k)).isEqualTo(FP_HIGH);
    assertThat(Keys.fingerprintLow(k)).isEqualTo(FP_LOW);
  }

  @Test
  void forwardIndexAndTimeSeriesGolden() {
    assertThat(hex(Keys.forwardIndex(BUCKET, 7))).isEqualTo(FORWARD_INDEX);
    assertThat(hex(Keys.timeSeries(BUCKET, 7))).isEqualTo(TIME_SERIES);
    assertThat(Keys.recordType(hex(FORWARD_INDEX))).isEqualTo(RecordType.FORWARD_INDEX);
    assertThat(Keys.recordType(hex(TIME_SERIES))).isEqualTo(RecordType.TIME_SERIES);
    assertThat(Keys.timeBucket(hex(FORWARD_INDEX))).isEqualTo(BUCKET);
    assertThat(Keys.seriesId(hex(FORWARD_INDEX))).isEqualTo(7);
    assertThat(Keys.seriesId(hex(TIME_SERIES))).isEqualTo(7);
    // u32 series ids: the high bit is a big-endian byte, not a sign.
    assertThat(hex(Keys.timeSeries(BUCKET, 0xFFFF_FFFE)))
        .isEqualTo("01 51 01 b1 ae f8 ff ff ff fe");
    assertThat(Keys.seriesId(hex("01 51 01 b1 ae f8 ff ff ff fe"))).isEqualTo(0xFFFF_FFFE);
  }

  @Test
  void invertedIndexGolden() {
    assertThat(hex(Keys.invertedIndex(BUCKET, "job", "api"))).isEqualTo(INVERTED_INDEX);
    assertThat(Keys.invertedIndexLabel(hex(INVERTED_INDEX))).containsExactly("job", "api");
    assertThat(Keys.timeBucket(hex(INVERTED_INDEX))).isEqualTo(BUCKET);

    assertThat(hex(Keys.invertedIndexAllSeries(BUCKET))).isEqualTo(INVERTED_INDEX_ALL);
    assertThat(hex(Keys.invertedIndex(BUCKET, "", ""))).isEqualTo(INVERTED_INDEX_ALL);
    assertThat(Keys.invertedIndexLabel(hex(INVERTED_INDEX_ALL))).containsExactly("", "");

    assertThat(hex(Keys.invertedIndexLabelPrefix(BUCKET, "job")))
        .isEqualTo(INVERTED_INDEX_JOB_PREFIX);

    assertThat(hex(Keys.invertedIndex(BUCKET, "a\u0000b\u0001", "x")))
        .isEqualTo(INVERTED_INDEX_ESCAPED);
    assertThat(Keys.invertedIndexLabel(hex(INVERTED_INDEX_ESCAPED)))
        .containsExactly("a\u0000b\u0001", "x");

    // Non-ASCII: "zone"="Zürich" (ü = c3 bc) and a supplementary character (U+1F600 = f0 9f 98 80).
    assertThat(hex(Keys.invertedIndex(BUCKET, "zone", "Zürich\uD83D\uDE00")))
        .isEqualTo("01 41 01 b1 ae f8 7a 6f 6e 65 00 5a c3 bc 72 69 63 68 f0 9f 98 80");
  }

  @Test
  void bucketPrefixGolden() {
    assertThat(hex(Keys.bucketPrefix(RecordType.TIME_SERIES, BUCKET)))
        .isEqualTo("01 51 01 b1 ae f8");
    assertThat(hex(Keys.bucketPrefix(RecordType.INVERTED_INDEX, new TimeBucket(3, 28_421_760))))
        .isEqualTo("01 43 01 b1 ae 80");
    assertThatThrownBy(() -> Keys.bucketPrefix(RecordType.BUCKET_LIST, BUCKET))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> Keys.bucketPrefix(RecordType.SCHEMA, BUCKET))
        .isInstanceOf(IllegalArgumentException.class);
    for (byte[] k : goldenBucketKeys()) {
      byte[] prefix = Keys.bucketPrefix(Keys.recordType(k), BUCKET);
      assertThat(Arrays.copyOf(k, 6)).isEqualTo(prefix);
    }
  }

  @Test
  void recordTypeIdsAndScopes() {
    assertThat(RecordType.values())
        .extracting(RecordType::id)
        .containsExactly(1, 2, 3, 4, 5, 6, 7, 8, 9);
    assertThat(RecordType.fromId(5)).isEqualTo(RecordType.TIME_SERIES);
    // HEAD_LOG is the engine's: bucket-scoped, key 01 6s <bucket:4> <seq:8> (docs/format.md, engine
    // section).
    assertThat(RecordType.HEAD_LOG.bucketScoped()).isTrue();
    assertThat(RecordType.SCHEMA.bucketScoped()).isFalse();
    assertThat(RecordType.BUCKET_LIST.bucketScoped()).isFalse();
    assertThat(RecordType.INVERTED_INDEX.bucketScoped()).isTrue();
    assertThat(RecordType.SCHEMA.tag(0)).isEqualTo(0x70);
    assertThat(RecordType.METADATA.bucketScoped()).isFalse();
    assertThat(RecordType.METADATA.tag(0)).isEqualTo(0x80);
    assertThat(RecordType.TIME_SERIES.tag(15)).isEqualTo(0x5F);
    // 9 is HeadChunk since issue #22's item 5; 10 is the first id still free
    assertThat(RecordType.HEAD_CHUNK.bucketScoped()).isTrue();
    assertThat(RecordType.HEAD_CHUNK.tag(1)).isEqualTo(0x91);
    for (int id : new int[] {0, 10, 15, 16, -1}) {
      assertThatThrownBy(() -> RecordType.fromId(id)).isInstanceOf(IllegalArgumentException.class);
    }
    byte[] headLog = hex("01 61 01 b1 ae f8 00 00 00 00 00 00 00 01");
    assertThat(Keys.recordType(headLog)).isEqualTo(RecordType.HEAD_LOG);
    assertThat(Keys.timeBucket(headLog)).isEqualTo(BUCKET);
    assertThat(headLog).startsWith(Keys.bucketPrefix(RecordType.HEAD_LOG, BUCKET));
  }

  @Test
  void builderArgumentChecks() {
    assertThatThrownBy(() -> Keys.invertedIndex(BUCKET, "", "x"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> Keys.invertedIndexLabelPrefix(BUCKET, ""))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> Keys.invertedIndex(BUCKET, "a\uD800", "x"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> Keys.invertedIndex(BUCKET, "a", "\uDC00"))
        .isInstanceOf(IllegalArgumentException.class);
  }

  // ------------------------------------------------------------------------------ corrupt keys

  @Test
  void everyTruncationOfAFixedSizeKeyIsCorrupt() {
    for (String golden :
        List.of(BUCKET_LIST, SCHEMA, SERIES_DICTIONARY, FORWARD_INDEX, TIME_SERIES)) {
      byte[] k = hex(golden);
      for (int len = 0; len < k.length; len++) {
        byte[] t = Arrays.copyOf(k, len);
        assertCorrupt(golden + " cut to " + len, t, Keys::recordType);
        assertCorrupt(golden + " cut to " + len, t, Keys::timeBucket);
        assertCorrupt(golden + " cut to " + len, t, Keys::seriesId);
        assertCorrupt(golden + " cut to " + len, t, Keys::fingerprintHigh);
        assertCorrupt(golden + " cut to " + len, t, Keys::invertedIndexLabel);
      }
      // One byte too many is corrupt, too.
      assertCorrupt(golden + " + 1 byte", Arrays.copyOf(k, k.length + 1), Keys::recordType);
    }
  }

  @Test
  void truncatedInvertedIndexKeysAreCorruptOrShorterValues() {
    for (String golden :
        List.of(
            INVERTED_INDEX,
            INVERTED_INDEX_ALL,
            INVERTED_INDEX_ESCAPED,
            INVERTED_INDEX_JOB_PREFIX)) {
      byte[] k = hex(golden);
      int terminator = TerminatedBytes.end(k, 6, k.length);
      for (int len = 0; len < k.length; len++) {
        byte[] t = Arrays.copyOf(k, len);
        if (len < terminator) {
          assertCorrupt(golden + " cut to " + len, t, Keys::invertedIndexLabel);
        } else {
          // Cutting the value gives a shorter but valid value (the value runs to the end of the
          // key).
          String[] label = Keys.invertedIndexLabel(t);
          assertThat(Keys.invertedIndex(BUCKET, label[0], label[1])).isEqualTo(t);
        }
      }
    }
    // A multi-byte character cut in the middle is invalid UTF-8.
    byte[] k = Keys.invertedIndex(BUCKET, "zone", "Zürich");
    assertCorrupt("cut inside ü", Arrays.copyOf(k, 13), Keys::invertedIndexLabel);
  }

  @Test
  void unknownVersionIsCorrupt() {
    for (byte[] k : allGoldenKeys()) {
      for (int v : new int[] {0x00, 0x02, 0x7F, 0x80, 0xFF}) {
        byte[] bad = k.clone();
        bad[0] = (byte) v;
        assertThatThrownBy(() -> Keys.recordType(bad))
            .isInstanceOf(CorruptRecordException.class)
            .hasMessageContaining("version");
        assertCorrupt("version " + v, bad, Keys::timeBucket);
      }
    }
  }

  @Test
  void badTagsAreCorrupt() {
    // Unknown or reserved record types.
    for (int type : new int[] {0x0, 0x8, 0x9, 0xF}) {
      assertCorrupt(
          "type " + type,
          hex(String.format("01 %x1 01 b1 ae f8 00 00 00 07", type)),
          Keys::recordType);
    }
    // A bucket-scoped type with size code 0, a global type with a size code.
    assertCorrupt("TimeSeries with code 0", hex("01 50 01 b1 ae f8 00 00 00 07"), Keys::recordType);
    assertCorrupt("BucketList with code 1", hex("01 11"), Keys::recordType);
    assertCorrupt("Schema with code 1", hex("01 71"), Keys::recordType);
    assertCorrupt(
        "HeadLog with code 0", hex("01 60 01 b1 ae f8 00 00 00 00 00 00 00 01"), Keys::recordType);
    assertCorrupt("HeadLog without its bucket", hex("01 61 01 b1"), Keys::recordType);
    // An unaligned bucket: 2-hour code with an odd-hour start.
    assertCorrupt("unaligned", hex("01 32 01 b1 af 34 00 00 00 07"), Keys::timeBucket);
    assertCorrupt("unaligned", hex("01 32 01 b1 af 34 00 00 00 07"), Keys::seriesId);
    assertCorrupt("unaligned minute", hex("01 51 01 b1 ae f9 00 00 00 07"), Keys::seriesId);
  }

  @Test
  void wrongRecordTypeForTheDecoderIsCorrupt() {
    assertCorrupt("seriesId of inverted", hex(INVERTED_INDEX), Keys::seriesId);
    assertCorrupt("seriesId of dictionary", hex(SERIES_DICTIONARY), Keys::seriesId);
    assertCorrupt("label of time series", hex(TIME_SERIES), Keys::invertedIndexLabel);
    assertCorrupt("label of forward", hex(FORWARD_INDEX), Keys::invertedIndexLabel);
    assertCorrupt("bucket of bucket list", hex(BUCKET_LIST), Keys::timeBucket);
    assertCorrupt("bucket of schema", hex(SCHEMA), Keys::timeBucket);
    assertCorrupt("fingerprint of forward", hex(FORWARD_INDEX), Keys::fingerprintLow);
    // Same length, other type: a ForwardIndex key is not a SeriesDictionary key even if re-tagged.
    assertCorrupt("retagged", hex("01 21 01 b1 ae f8 00 00 00 07"), Keys::recordType);
  }

  @Test
  void invalidInvertedIndexKeysAreCorrupt() {
    String prefix = "01 41 01 b1 ae f8 ";
    for (String tail :
        List.of(
            "6a 6f 62", // no terminator
            "6a 01", // escape cut off
            "6a 01 03 00 78", // invalid escape 01 03
            "6a 01 00 00 78", // invalid escape 01 00
            "c3 00 78", // name: truncated 2-byte sequence
            "6a 00 c3", // value: truncated 2-byte sequence
            "6a 00 c0 80", // overlong NUL
            "6a 00 ed a0 80", // encoded surrogate U+D800
            "6a 00 f4 90 80 80", // above U+10FFFF
            "6a 00 ff", // 0xFF never occurs in UTF-8
            "6a 00 80", // lone continuation byte
            "00 78" // empty name with a value
            )) {
      assertCorrupt(tail, hex(prefix + tail), Keys::invertedIndexLabel);
    }
  }

  @Test
  void randomBytesNeverThrowAnythingButCorrupt() {
    long seed = seed();
    SplittableRandom r = new SplittableRandom(seed);
    List<Function<byte[], ?>> decoders =
        List.of(
            Keys::recordType,
            Keys::timeBucket,
            Keys::seriesId,
            Keys::invertedIndexLabel,
            Keys::fingerprintHigh);
    for (int i = 0; i < 10_000; i++) {
      byte[] k = new byte[r.nextInt(30)];
      r.nextBytes(k);
      if (k.length > 0 && r.nextBoolean()) {
        k[0] = 1; // get past the version check
        if (k.length > 1 && r.nextBoolean()) {
          k[1] = (byte) ((1 + r.nextInt(7)) << 4 | r.nextInt(16));
        }
      }
      for (Function<byte[], ?> d : decoders) {
        int iter = i;
        corruptOrDecodes(() -> seedMsg(seed, iter) + " key " + hex(k), () -> d.apply(k));
      }
    }
  }

  // ------------------------------------------------------------------------------ properties

  @Test
  void roundTrips() {
    long seed = seed();
    SplittableRandom r = new SplittableRandom(seed);
    for (int i = 0; i < 5_000; i++) {
      String msg = seedMsg(seed, i);
      TimeBucket b = randomBucket(r);
      int id = r.nextInt();
      long hi = r.nextLong();
      long lo = r.nextLong();
      assertThat(Keys.seriesId(Keys.timeSeries(b, id))).as(msg).isEqualTo(id);
      assertThat(Keys.seriesId(Keys.forwardIndex(b, id))).as(msg).isEqualTo(id);
      assertThat(Keys.timeBucket(Keys.timeSeries(b, id))).as(msg).isEqualTo(b);
      byte[] sd = Keys.seriesDictionary(b, hi, lo);
      assertThat(Keys.timeBucket(sd)).as(msg).isEqualTo(b);
      assertThat(Keys.fingerprintHigh(sd)).as(msg).isEqualTo(hi);
      assertThat(Keys.fingerprintLow(sd)).as(msg).isEqualTo(lo);
      String name = RecordCodecTestSupport.randomNonEmptyString(r, 12);
      String value = randomString(r, 12);
      byte[] ii = Keys.invertedIndex(b, name, value);
      assertThat(Keys.invertedIndexLabel(ii))
          .as(msg + " name " + name + " value " + value)
          .containsExactly(name, value);
      assertThat(Keys.timeBucket(ii)).as(msg).isEqualTo(b);
      assertThat(ii).as(msg).startsWith(Keys.invertedIndexLabelPrefix(b, name));
    }
  }

  @Test
  void seriesKeysSortInLogicalOrder() {
    long seed = seed();
    SplittableRandom r = new SplittableRandom(seed);
    RecordType[] types = {RecordType.FORWARD_INDEX, RecordType.TIME_SERIES};
    for (int i = 0; i < 50_000; i++) {
      RecordType ta = types[r.nextInt(2)];
      RecordType tb = r.nextInt(4) == 0 ? types[r.nextInt(2)] : ta;
      TimeBucket ba = randomBucket(r);
      TimeBucket bb =
          r.nextInt(3) == 0
              ? ba
              : r.nextBoolean()
                  ? randomBucket(r)
                  : new TimeBucket(ba.sizeCode(), randomBucket(r, ba.sizeCode()).startMinutes());
      int ia = randomSeriesId(r);
      int ib = r.nextInt(3) == 0 ? ia : randomSeriesId(r);
      byte[] ka = seriesKey(ta, ba, ia);
      byte[] kb = seriesKey(tb, bb, ib);
      int logical = Integer.compare(ta.id(), tb.id());
      if (logical == 0) {
        logical = compareBucketsAsKeys(ba, bb);
      }
      if (logical == 0) {
        logical = Integer.compareUnsigned(ia, ib);
      }
      assertThat(Integer.signum(Arrays.compareUnsigned(ka, kb)))
          .as("%s: %s %s %d vs %s %s %d", seedMsg(seed, i), ta, ba, ia, tb, bb, ib)
          .isEqualTo(Integer.signum(logical));
      // Every key lies inside its (type, bucket) prefix.
      assertThat(ka).startsWith(Keys.bucketPrefix(ta, ba));
    }
  }

  @Test
  void invertedIndexKeysSortByBucketNameValue() {
    long seed = seed();
    SplittableRandom r = new SplittableRandom(seed);
    for (int i = 0; i < 50_000; i++) {
      TimeBucket ba = randomBucket(r);
      TimeBucket bb = r.nextInt(4) == 0 ? randomBucket(r) : ba;
      String na = randomName(r);
      String nb = r.nextInt(3) == 0 ? na : randomName(r);
      String va = na.isEmpty() ? "" : randomValue(r);
      String vb = nb.isEmpty() ? "" : r.nextInt(3) == 0 && !na.isEmpty() ? va : randomValue(r);
      byte[] ka = Keys.invertedIndex(ba, na, va);
      byte[] kb = Keys.invertedIndex(bb, nb, vb);
      int logical = compareBucketsAsKeys(ba, bb);
      if (logical == 0) {
        logical = Labels.compareUtf8(na, nb);
      }
      if (logical == 0) {
        logical = Labels.compareUtf8(va, vb);
      }
      String msg =
          String.format(
              "%s: %s [%s]=[%s] vs %s [%s]=[%s]",
              seedMsg(seed, i), ba, escape(na), escape(va), bb, escape(nb), escape(vb));
      assertThat(Integer.signum(Arrays.compareUnsigned(ka, kb)))
          .as(msg)
          .isEqualTo(Integer.signum(logical));

      // Prefix property: the keys of a label are exactly those inside its prefix range.
      if (!na.isEmpty()) {
        byte[] prefix = Keys.invertedIndexLabelPrefix(ba, na);
        byte[] end = KeyRanges.prefixEnd(prefix);
        boolean inRange =
            Arrays.compareUnsigned(kb, prefix) >= 0 && Arrays.compareUnsigned(kb, end) < 0;
        boolean sameLabel = ba.equals(bb) && na.equals(nb);
        assertThat(inRange).as(msg + " (prefix range of " + escape(na) + ")").isEqualTo(sameLabel);
        assertThat(startsWith(kb, prefix)).as(msg).isEqualTo(sameLabel);
      }
    }
  }

  @Test
  void labelPrefixSeparatesNamesThatShareBytes() {
    // "a" < "a\u0000b" < "a\u0001" < "a\u0002" < "ab" in UTF-8 byte order; none's keys fall in
    // another's prefix.
    List<String> names = List.of("a", "a\u0000", "a\u0000b", "a\u0001", "a\u0002", "ab", "b");
    for (String n : names) {
      byte[] prefix = Keys.invertedIndexLabelPrefix(BUCKET, n);
      for (String other : names) {
        for (String v : List.of("v", "\u0000", "\uFFFF", "\uD83D\uDE00")) {
          byte[] k = Keys.invertedIndex(BUCKET, other, v);
          assertThat(startsWith(k, prefix))
              .as("%s in prefix of %s", escape(other), escape(n))
              .isEqualTo(n.equals(other));
        }
      }
    }
    for (int i = 0; i + 1 < names.size(); i++) {
      assertThat(
              Arrays.compareUnsigned(
                  Keys.invertedIndex(BUCKET, names.get(i), "\uDBFF\uDFFF"),
                  Keys.invertedIndex(BUCKET, names.get(i + 1), "\u0000")))
          .as(escape(names.get(i)))
          .isNegative();
    }
    // The all-series key sorts first in its bucket.
    assertThat(
            Arrays.compareUnsigned(
                Keys.invertedIndexAllSeries(BUCKET),
                Keys.invertedIndex(BUCKET, "\u0000", "\u0000")))
        .isNegative();
  }

  // ------------------------------------------------------------------------------ helpers

  static TimeBucket randomBucket(SplittableRandom r) {
    return randomBucket(r, 1 + r.nextInt(15));
  }

  static TimeBucket randomBucket(SplittableRandom r, int code) {
    long minutes = 60L << (code - 1);
    long max = 0xFFFF_FFFFL / minutes;
    long n =
        r.nextInt(4) == 0
            ? r.nextLong(3)
            : r.nextInt(4) == 0 ? max - r.nextLong(3) : r.nextLong(max + 1);
    return new TimeBucket(code, (int) (n * minutes));
  }

  private static int randomSeriesId(SplittableRandom r) {
    return switch (r.nextInt(4)) {
      case 0 -> r.nextInt(4);
      case 1 -> -1 - r.nextInt(4); // near 2^32 - 1
      default -> r.nextInt();
    };
  }

  private static String randomName(SplittableRandom r) {
    if (r.nextInt(20) == 0) {
      return ""; // the all-series key
    }
    return r.nextInt(3) == 0
        ? List.of("a", "a\u0000", "a\u0000b", "a\u0001", "a\u0002", "ab", "\u0000", "\u0001", "job")
            .get(r.nextInt(9))
        : RecordCodecTestSupport.randomNonEmptyString(r, 6);
  }

  private static String randomValue(SplittableRandom r) {
    return r.nextInt(3) == 0
        ? List.of("", "x", "x\u0000", "\u0001", "\uD83D\uDE00", "\uFFFF").get(r.nextInt(6))
        : randomString(r, 6);
  }

  /** Keys order buckets by the tag's size code, then the big-endian start (unsigned). */
  private static int compareBucketsAsKeys(TimeBucket a, TimeBucket b) {
    int c = Integer.compare(a.sizeCode(), b.sizeCode());
    return c != 0 ? c : Integer.compareUnsigned(a.startMinutes(), b.startMinutes());
  }

  private static byte[] seriesKey(RecordType t, TimeBucket b, int id) {
    return t == RecordType.TIME_SERIES ? Keys.timeSeries(b, id) : Keys.forwardIndex(b, id);
  }

  private static boolean startsWith(byte[] k, byte[] prefix) {
    return k.length >= prefix.length
        && Arrays.equals(k, 0, prefix.length, prefix, 0, prefix.length);
  }

  private static List<byte[]> goldenBucketKeys() {
    return List.of(
        hex(SERIES_DICTIONARY),
        hex(FORWARD_INDEX),
        hex(TIME_SERIES),
        hex(INVERTED_INDEX),
        hex(INVERTED_INDEX_ALL),
        hex(INVERTED_INDEX_ESCAPED));
  }

  private static List<byte[]> allGoldenKeys() {
    return List.of(
        hex(BUCKET_LIST),
        hex(SCHEMA),
        hex(SERIES_DICTIONARY),
        hex(FORWARD_INDEX),
        hex(TIME_SERIES),
        hex(INVERTED_INDEX),
        hex(INVERTED_INDEX_ALL),
        hex(INVERTED_INDEX_ESCAPED));
  }

  private static void assertCorrupt(String context, byte[] key, Function<byte[], ?> decoder) {
    assertThatThrownBy(() -> decoder.apply(key))
        .as(context + ": " + hex(key))
        .isInstanceOf(CorruptRecordException.class);
  }

  static String escape(String s) {
    StringBuilder sb = new StringBuilder();
    s.codePoints()
        .forEach(
            cp -> {
              if (cp < 0x20 || cp > 0x7E) {
                sb.append(String.format("\\u{%x}", cp));
              } else {
                sb.append((char) cp);
              }
            });
    return sb.toString();
  }
}
