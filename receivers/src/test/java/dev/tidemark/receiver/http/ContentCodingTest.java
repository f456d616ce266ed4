package dev.tidemark.receiver.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdOutputStream;
import dev.tidemark.receiver.http.BoundedBody.BodyTooLarge;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.zip.Deflater;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;
import org.xerial.snappy.Snappy;
import org.xerial.snappy.SnappyFramedOutputStream;

/**
 * Every accepted request body coding against an independent encoder (the zstd C library through
 * zstd-jni, snappy-java's block and framed writers, the JDK's zlib): seeded random bodies in random
 * pieces decode to what was encoded, bombs stop at the limit, and broken streams are {@link
 * CorruptBodyException}s with plain messages.
 */
class ContentCodingTest {
  private static final long LIMIT = 1 << 20;

  @Test
  void headerNamesMapToCodings() {
    assertThat(ContentCoding.of(null)).isEqualTo(ContentCoding.IDENTITY);
    assertThat(ContentCoding.of(" Identity ")).isEqualTo(ContentCoding.IDENTITY);
    assertThat(ContentCoding.of("")).isEqualTo(ContentCoding.IDENTITY);
    assertThat(ContentCoding.of("x-gzip")).isEqualTo(ContentCoding.GZIP);
    assertThat(ContentCoding.of("ZSTD")).isEqualTo(ContentCoding.ZSTD);
    assertThat(ContentCoding.of("zlib")).isEqualTo(ContentCoding.DEFLATE);
    assertThat(ContentCoding.of("deflate")).isEqualTo(ContentCoding.DEFLATE);
    assertThat(ContentCoding.of("snappy")).isEqualTo(ContentCoding.SNAPPY);
    assertThat(ContentCoding.of("x-snappy-framed")).isEqualTo(ContentCoding.SNAPPY_FRAMED);
    assertThat(ContentCoding.of("br")).isNull();
    assertThat(ContentCoding.of("gzip, zstd")).as("stacked codings").isNull();
  }

  @Test
  void seededBodiesRoundTripThroughEveryCodingInRandomPieces() throws Exception {
    SplittableRandom rnd = new SplittableRandom(20261128);
    for (int round = 0; round < 60; round++) {
      byte[] body = body(rnd, rnd.nextInt(0, 300_000));
      for (ContentCoding coding : ContentCoding.values()) {
        if (coding == ContentCoding.IDENTITY) {
          continue;
        }
        for (byte[] encoded : encodings(coding, body, rnd)) {
          assertThat(decode(coding, encoded, rnd, LIMIT))
              .as("%s, %d bytes, round %d", coding, body.length, round)
              .isEqualTo(body);
        }
      }
    }
  }

  @Test
  void snappyBodiesAreBlockOrFramedByTheirFirstBytes() throws Exception {
    byte[] body =
        "cpu_seconds_total{mode=\"idle\"} 1".repeat(1000).getBytes(StandardCharsets.UTF_8);
    SplittableRandom rnd = new SplittableRandom(1);
    assertThat(decode(ContentCoding.SNAPPY, Snappy.compress(body), rnd, LIMIT)).isEqualTo(body);
    assertThat(decode(ContentCoding.SNAPPY, framedSnappy(body), rnd, LIMIT)).isEqualTo(body);
    assertThatThrownBy(() -> decode(ContentCoding.SNAPPY_FRAMED, Snappy.compress(body), rnd, LIMIT))
        .isInstanceOf(CorruptBodyException.class)
        .hasMessage("invalid framed snappy data (no stream identifier)");
  }

  @Test
  void bombsStopAtTheLimitWithoutDecodingMore() throws Exception {
    SplittableRandom rnd = new SplittableRandom(2);
    // Zeros: 2 MiB compress below the limit in every coding, 64 MiB to a few KB in most.
    for (int size : new int[] {2 << 20, 64 << 20}) {
      byte[] zeros = new byte[size];
      for (ContentCoding coding : ContentCoding.values()) {
        if (coding == ContentCoding.IDENTITY) {
          continue;
        }
        byte[] bomb = encodings(coding, zeros, rnd).get(0);
        assertThat(bomb.length).as("%s bomb", coding).isLessThan(size / 16);
        BoundedBody out = new BoundedBody(LIMIT, 1024, n -> true);
        assertThatThrownBy(() -> feed(coding.decoder(out), bomb, rnd))
            .as("%s bomb of %d bytes", coding, size)
            .isInstanceOf(BodyTooLarge.class);
        assertThat(out.allocated()).as("%s bomb", coding).isLessThanOrEqualTo(LIMIT + 1);
      }
    }
  }

  @Test
  void compressedBodiesOverTheLimitAreTooLargeAsTheyArrive() throws Exception {
    byte[] random = new byte[(int) LIMIT]; // incompressible
    new java.util.Random(3).nextBytes(random);
    for (ContentCoding coding : new ContentCoding[] {ContentCoding.ZSTD, ContentCoding.SNAPPY}) {
      byte[] encoded = encodings(coding, random, new SplittableRandom(4)).get(0);
      BoundedBody out = new BoundedBody(LIMIT / 2, 1024, n -> true);
      BodyDecoder d = coding.decoder(out);
      assertThatThrownBy(() -> d.write(ByteBuffer.wrap(encoded)))
          .as("%s", coding)
          .isInstanceOf(BodyTooLarge.class);
    }
  }

  @Test
  void zstdFramesBackToBackAndSkippableFramesDecodeAsOneBody() throws Exception {
    byte[] a = "first frame ".repeat(100).getBytes(StandardCharsets.UTF_8);
    byte[] b = "second frame".repeat(100).getBytes(StandardCharsets.UTF_8);
    byte[] skippable = {0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 1, 2, 3};
    byte[] stream = concat(concat(Zstd.compress(a), skippable), Zstd.compress(b));
    assertThat(decode(ContentCoding.ZSTD, stream, new SplittableRandom(7), LIMIT))
        .isEqualTo(concat(a, b));
  }

  @Test
  void aZstdFrameMayAskForA16MiBWindowButNotMore() throws Exception {
    // A frame with no content size, the window in its descriptor (exponent e: 1 << (10 + e)),
    // then one raw last block of 5 bytes.
    for (int exponent : new int[] {14, 15, 21}) {
      byte[] frame = {
        (byte) 0x28,
        (byte) 0xb5,
        (byte) 0x2f,
        (byte) 0xfd, // magic
        0x00, // no content size, not single segment, no checksum, no dictionary
        (byte) (exponent << 3), // window descriptor
        (byte) ((5 << 3) | 1),
        0,
        0, // raw block, last, 5 bytes
        'h',
        'e',
        'l',
        'l',
        'o'
      };
      if (10 + exponent <= dev.tidemark.receiver.ZstdStreams.WINDOW_LOG_MAX) {
        assertThat(decode(ContentCoding.ZSTD, frame, new SplittableRandom(5), LIMIT))
            .isEqualTo("hello".getBytes(StandardCharsets.UTF_8));
      } else {
        assertThatThrownBy(() -> decode(ContentCoding.ZSTD, frame, new SplittableRandom(5), LIMIT))
            .as("window 1 << %d", 10 + exponent)
            .isInstanceOf(CorruptBodyException.class)
            .hasMessageStartingWith("invalid zstd data (");
      }
    }
  }

  @Test
  void brokenStreamsAreCorruptBodiesWithPlainMessages() throws Exception {
    byte[] body = "up{job=\"node\"} 1\n".repeat(2000).getBytes(StandardCharsets.UTF_8);
    SplittableRandom rnd = new SplittableRandom(6);
    for (ContentCoding coding : ContentCoding.values()) {
      if (coding == ContentCoding.IDENTITY) {
        continue;
      }
      byte[] good = encodings(coding, body, rnd).get(0);
      assertThatThrownBy(() -> decode(coding, new byte[0], rnd, LIMIT))
          .as("%s empty", coding)
          .isInstanceOf(CorruptBodyException.class)
          .hasMessage("empty body");
      assertThatThrownBy(() -> decode(coding, Arrays.copyOf(good, good.length / 2), rnd, LIMIT))
          .as("%s cut in half", coding)
          .isInstanceOf(CorruptBodyException.class);
      byte[] garbage = "this is not compressed at all, not even a little".getBytes();
      if (coding != ContentCoding.DEFLATE) { // raw deflate takes some garbage as stored blocks
        assertThatThrownBy(() -> decode(coding, garbage, rnd, LIMIT))
            .as("%s garbage", coding)
            .isInstanceOf(CorruptBodyException.class)
            .hasMessageStartingWith(
                coding == ContentCoding.GZIP ? "not in gzip format" : "invalid ");
      }
    }
    byte[] framed = framedSnappy(body);
    framed[framed.length - 1] ^= 1; // the last chunk's data: its checksum no longer matches
    assertThatThrownBy(() -> decode(ContentCoding.SNAPPY, framed, rnd, LIMIT))
        .isInstanceOf(CorruptBodyException.class)
        .hasMessageStartingWith("invalid framed snappy data");
    // The stream identifier, then an empty chunk of an unskippable reserved type.
    byte[] reserved = concat(Arrays.copyOf(framedSnappy(body), 10), new byte[] {0x02, 0, 0, 0});
    assertThatThrownBy(() -> decode(ContentCoding.SNAPPY_FRAMED, reserved, rnd, LIMIT))
        .isInstanceOf(CorruptBodyException.class)
        .hasMessage("invalid framed snappy data (reserved chunk type 0x2)");
    byte[] skippable = concat(framedSnappy(body), new byte[] {(byte) 0xfe, 3, 0, 0, 1, 2, 3});
    assertThat(decode(ContentCoding.SNAPPY_FRAMED, skippable, rnd, LIMIT)).isEqualTo(body);
  }

  // ------------------------------------------------------------------ helpers

  /** Text-like (compressible) or random bytes. */
  private static byte[] body(SplittableRandom rnd, int n) {
    byte[] b = new byte[n];
    if (rnd.nextBoolean()) {
      for (int i = 0; i < n; i++) {
        b[i] = (byte) rnd.nextInt();
      }
    } else {
      byte[] words = "node_cpu_seconds_total{cpu=\"0\",mode=\"idle\"} 1234.5 ".getBytes();
      for (int i = 0; i < n; i++) {
        b[i] = rnd.nextInt(20) == 0 ? (byte) rnd.nextInt() : words[i % words.length];
      }
    }
    return b;
  }

  /** The ways an independent encoder writes {@code body} in {@code coding}. */
  private static java.util.List<byte[]> encodings(
      ContentCoding coding, byte[] body, SplittableRandom rnd) throws IOException {
    return switch (coding) {
      case IDENTITY -> java.util.List.of(body);
      case GZIP -> {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (GZIPOutputStream gz = new GZIPOutputStream(bytes)) {
          gz.write(body);
        }
        yield java.util.List.of(bytes.toByteArray());
      }
      case DEFLATE -> java.util.List.of(deflate(body, false), deflate(body, true));
      case ZSTD -> {
        ByteArrayOutputStream streamed = new ByteArrayOutputStream();
        try (ZstdOutputStream z = new ZstdOutputStream(streamed, 3)) {
          int at = 0;
          while (at < body.length) { // several flushes: several blocks, no content size
            int n = Math.min(body.length - at, rnd.nextInt(1, 200_000));
            z.write(body, at, n);
            z.flush();
            at += n;
          }
        }
        byte[] oneShot = Zstd.compress(body, rnd.nextInt(1, 20));
        yield java.util.List.of(streamed.toByteArray(), oneShot);
      }
      case SNAPPY -> java.util.List.of(Snappy.compress(body), framedSnappy(body));
      case SNAPPY_FRAMED -> java.util.List.of(framedSnappy(body));
    };
  }

  private static byte[] deflate(byte[] body, boolean raw) {
    Deflater d = new Deflater(Deflater.DEFAULT_COMPRESSION, raw);
    d.setInput(body);
    d.finish();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    byte[] buf = new byte[65536];
    while (!d.finished()) {
      out.write(buf, 0, d.deflate(buf));
    }
    d.end();
    return out.toByteArray();
  }

  private static byte[] framedSnappy(byte[] body) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (SnappyFramedOutputStream s = new SnappyFramedOutputStream(bytes)) {
      s.write(body);
    }
    return bytes.toByteArray();
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] c = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, c, a.length, b.length);
    return c;
  }

  private static byte[] decode(
      ContentCoding coding, byte[] encoded, SplittableRandom rnd, long limit) throws Exception {
    BoundedBody out = new BoundedBody(limit, 1024, n -> true);
    feed(coding.decoder(out), encoded, rnd);
    return out.bytes().toByteArray();
  }

  private static void feed(BodyDecoder d, byte[] encoded, SplittableRandom rnd) throws Exception {
    try (d) {
      int at = 0;
      while (at < encoded.length) {
        int n = Math.min(encoded.length - at, rnd.nextInt(1, 40_000));
        ByteBuffer piece =
            rnd.nextBoolean()
                ? ByteBuffer.wrap(encoded, at, n)
                : ByteBuffer.allocateDirect(n).put(encoded, at, n).flip();
        d.write(piece);
        assertThat(piece.hasRemaining()).isFalse();
        at += n;
      }
      d.finish();
    }
  }
}
