package dev.tidemark.receiver.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.tidemark.receiver.http.BoundedBody.BodyTooLarge;
import dev.tidemark.receiver.http.BoundedBody.Overloaded;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;

class GzipDecoderTest {
  private static final long SEED = 20261122L;

  @Test
  void aBombStopsInflatingAtTheLimitPlusOneByteAndAllocatesNoMore() throws Exception {
    long limit = 1L << 20; // 1 MiB
    byte[] bomb = gzipZeros(256L << 20); // 256 MiB of zeros, ~256 KiB compressed
    AtomicLong reserved = new AtomicLong();
    BoundedBody body =
        new BoundedBody(limit, BoundedBody.FIRST_SEGMENT_BYTES, n -> reserved.addAndGet(n) >= 0);
    try (GzipDecoder gz = new GzipDecoder(body)) {
      assertThatThrownBy(() -> feed(gz, bomb, 8192)).isInstanceOf(BodyTooLarge.class);
    }
    assertThat(body.length()).as("bytes inflated").isEqualTo(limit + 1);
    assertThat(body.allocated()).as("bytes allocated").isEqualTo(limit + 1);
    assertThat(reserved.get()).as("bytes reserved in flight").isEqualTo(limit + 1);
  }

  @Test
  void aBodyOfExactlyTheLimitPasses() throws Exception {
    byte[] data = randomBytes(100_000, 1);
    BoundedBody body = new BoundedBody(data.length, 1000, n -> true);
    try (GzipDecoder gz = new GzipDecoder(body)) {
      feed(gz, gzip(data), 777);
      gz.finish();
    }
    assertThat(body.bytes().toByteArray()).isEqualTo(data);
    assertThat(body.allocated()).isLessThanOrEqualTo(data.length + 1L);

    BoundedBody oneLess = new BoundedBody(data.length - 1, 1000, n -> true);
    try (GzipDecoder gz = new GzipDecoder(oneLess)) {
      assertThatThrownBy(() -> feed(gz, gzip(data), 777)).isInstanceOf(BodyTooLarge.class);
    }
  }

  @Test
  void decodesWhateverTheInputPiecesAre() throws Exception {
    SplittableRandom random = new SplittableRandom(SEED);
    for (int round = 0; round < 50; round++) {
      byte[] data = randomBytes(random.nextInt(0, 300_000), random.nextLong());
      byte[] gz = gzip(data);
      int piece = 1 + random.nextInt(round % 5 == 0 ? 3 : 20_000);
      BoundedBody body = new BoundedBody(1 << 20, 1 + random.nextInt(70_000), n -> true);
      try (GzipDecoder d = new GzipDecoder(body)) {
        feed(d, gz, piece);
        d.finish();
      }
      assertThat(body.bytes().toByteArray())
          .as("seed %d round %d piece %d", SEED, round, piece)
          .isEqualTo(data);
    }
  }

  @Test
  void headerFieldsAndConcatenatedMembers() throws Exception {
    byte[] a = "first member, ".getBytes();
    byte[] b = "second member".getBytes();
    byte[] stream = concat(gzipWithHeaderFields(a), gzip(b));
    BoundedBody body = new BoundedBody(1000, 10, n -> true);
    try (GzipDecoder d = new GzipDecoder(body)) {
      feed(d, stream, 1);
      d.finish();
    }
    assertThat(body.bytes().toStringUtf8()).isEqualTo("first member, second member");
  }

  @Test
  void bytesAfterTheLastMemberThatAreNoMemberAreIgnored() throws Exception {
    byte[] stream = concat(gzip("payload".getBytes()), "trailing junk".getBytes());
    BoundedBody body = new BoundedBody(1000, 10, n -> true);
    try (GzipDecoder d = new GzipDecoder(body)) {
      feed(d, stream, 3);
      d.finish();
    }
    assertThat(body.bytes().toStringUtf8()).isEqualTo("payload");
  }

  @Test
  void brokenStreamsAreCorruptBodyExceptionsWithPlainMessages() throws Exception {
    byte[] good = gzip(randomBytes(10_000, 7));
    assertThat(error(new byte[0])).isEqualTo("empty body");
    assertThat(error("not gzip at all".getBytes())).isEqualTo("not in gzip format");
    assertThat(error(Arrays.copyOf(good, good.length / 2)))
        .isEqualTo("unexpected end of the gzip stream");
    assertThat(error(Arrays.copyOf(good, 5))).isEqualTo("unexpected end of the gzip stream");
    byte[] badTrailer = good.clone();
    badTrailer[badTrailer.length - 6] ^= 1;
    assertThat(error(badTrailer)).startsWith("corrupt gzip trailer");
    byte[] corrupt = good.clone();
    for (int i = 12; i < corrupt.length - 8; i++) {
      corrupt[i] ^= 0x5a;
    }
    assertThat(error(corrupt)).startsWith("invalid deflate data");
    byte[] method = good.clone();
    method[2] = 7;
    assertThat(error(method)).isEqualTo("unsupported gzip compression method 7");
  }

  // ------------------------------------------------------------------ helpers

  private static String error(byte[] stream) throws Exception {
    BoundedBody body = new BoundedBody(1 << 20, 1000, n -> true);
    try (GzipDecoder d = new GzipDecoder(body)) {
      feed(d, stream, 100);
      d.finish();
    } catch (CorruptBodyException e) {
      return e.getMessage();
    }
    throw new AssertionError("no CorruptBodyException");
  }

  private static void feed(GzipDecoder d, byte[] stream, int piece)
      throws CorruptBodyException, BodyTooLarge, Overloaded {
    for (int at = 0; at < stream.length; at += piece) {
      ByteBuffer b = ByteBuffer.wrap(stream, at, Math.min(piece, stream.length - at)).slice();
      d.write(b);
      assertThat(b.hasRemaining()).isFalse();
    }
  }

  static byte[] gzip(byte[] data) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (OutputStream gz = new GZIPOutputStream(out)) {
      gz.write(data);
    }
    return out.toByteArray();
  }

  /**
   * A member with FEXTRA, FNAME, FCOMMENT and FHCRC set, built by hand (GZIPOutputStream sets
   * none).
   */
  private static byte[] gzipWithHeaderFields(byte[] data) throws IOException {
    byte[] plain = gzip(data);
    ByteArrayOutputStream header = new ByteArrayOutputStream();
    header.write(new byte[] {0x1f, (byte) 0x8b, 8, 4 | 8 | 16 | 2, 0, 0, 0, 0, 0, (byte) 255});
    header.write(new byte[] {3, 0, 'a', 'b', 'c'});
    header.write("name.bin\0".getBytes());
    header.write("a comment\0".getBytes());
    CRC32 crc = new CRC32();
    crc.update(header.toByteArray());
    header.write((int) crc.getValue() & 0xff);
    header.write((int) (crc.getValue() >> 8) & 0xff);
    return concat(header.toByteArray(), Arrays.copyOfRange(plain, 10, plain.length));
  }

  static byte[] gzipZeros(long n) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    byte[] zeros = new byte[1 << 20];
    try (OutputStream gz = new GZIPOutputStream(out, 1 << 16)) {
      for (long written = 0; written < n; written += zeros.length) {
        gz.write(zeros);
      }
    }
    return out.toByteArray();
  }

  private static byte[] randomBytes(int n, long seed) {
    // Compressible but not trivial: bytes from a small alphabet.
    SplittableRandom r = new SplittableRandom(seed);
    byte[] b = new byte[n];
    for (int i = 0; i < n; i++) {
      b[i] = (byte) ('a' + r.nextInt(8));
    }
    return b;
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] out = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }
}
