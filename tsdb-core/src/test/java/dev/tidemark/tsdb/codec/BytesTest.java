package dev.tidemark.tsdb.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.HexFormat;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** {@link Bytes} against fixed vectors and against {@link ByteBuffer} at every offset. */
class BytesTest {
  private static final long SEED = 0xB17E5L;

  private static String hex(byte[] b) {
    return HexFormat.ofDelimiter(" ").formatHex(b);
  }

  @Test
  void fixedVectors() {
    byte[] b = new byte[8];
    Bytes.putLongBe(b, 0, 0x0102030405060708L);
    assertThat(hex(b)).isEqualTo("01 02 03 04 05 06 07 08");
    Bytes.putLongLe(b, 0, 0x0102030405060708L);
    assertThat(hex(b)).isEqualTo("08 07 06 05 04 03 02 01");
    b = new byte[4];
    Bytes.putIntBe(b, 0, 0x0A0B0C0D);
    assertThat(hex(b)).isEqualTo("0a 0b 0c 0d");
    Bytes.putIntLe(b, 0, 0x0A0B0C0D);
    assertThat(hex(b)).isEqualTo("0d 0c 0b 0a");
    b = new byte[2];
    Bytes.putU16Le(b, 0, 0xBEEF);
    assertThat(hex(b)).isEqualTo("ef be");
    assertThat(Bytes.getU16Le(b, 0)).isEqualTo(0xBEEF);
    // Sign bits: high bytes of 0xFF read back as negative numbers, not as widened bytes.
    byte[] ff = {
      (byte) 0xFF,
      (byte) 0xFF,
      (byte) 0xFF,
      (byte) 0xFF,
      (byte) 0xFF,
      (byte) 0xFF,
      (byte) 0xFF,
      (byte) 0x80
    };
    assertThat(Bytes.getLongLe(ff, 0)).isEqualTo(0x80FFFFFFFFFFFFFFL);
    assertThat(Bytes.getLongBe(ff, 0)).isEqualTo(0xFFFFFFFFFFFFFF80L);
    assertThat(Bytes.getIntBe(ff, 4)).isEqualTo(0xFFFFFF80);
    assertThat(Bytes.getIntLe(ff, 4)).isEqualTo(0x80FFFFFF);
    assertThat(Bytes.getUnsignedBe(ff, 4, 4)).isEqualTo(0xFFFFFF80L);
    assertThat(Bytes.getUnsignedBe(ff, 0, 0)).isZero();
  }

  @Test
  void agreesWithByteBufferAtEveryOffset() {
    SplittableRandom rnd = new SplittableRandom(SEED);
    byte[] b = new byte[24];
    for (int i = 0; i < 20_000; i++) {
      rnd.nextBytes(b);
      int off = rnd.nextInt(b.length - 7);
      String seed = "seed " + SEED + ", iteration " + i;
      ByteBuffer be = ByteBuffer.wrap(b).order(ByteOrder.BIG_ENDIAN);
      ByteBuffer le = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
      assertThat(Bytes.getLongBe(b, off)).as(seed).isEqualTo(be.getLong(off));
      assertThat(Bytes.getLongLe(b, off)).as(seed).isEqualTo(le.getLong(off));
      assertThat(Bytes.getIntBe(b, off)).as(seed).isEqualTo(be.getInt(off));
      assertThat(Bytes.getIntLe(b, off)).as(seed).isEqualTo(le.getInt(off));
      assertThat(Bytes.getU16Le(b, off)).as(seed).isEqualTo(le.getShort(off) & 0xFFFF);
      assertThat(Bytes.getUnsignedBe(b, off, 8)).as(seed).isEqualTo(be.getLong(off));
      assertThat(Bytes.getUnsignedBe(b, off, 6)).as(seed).isEqualTo(be.getLong(off) >>> 16);
      long v = rnd.nextLong();
      byte[] x = new byte[b.length];
      byte[] y = new byte[b.length];
      Bytes.putLongBe(x, off, v);
      ByteBuffer.wrap(y).order(ByteOrder.BIG_ENDIAN).putLong(off, v);
      assertThat(x).as(seed).isEqualTo(y);
      Bytes.putLongLe(x, off, v);
      ByteBuffer.wrap(y).order(ByteOrder.LITTLE_ENDIAN).putLong(off, v);
      assertThat(x).as(seed).isEqualTo(y);
      Bytes.putIntBe(x, off, (int) v);
      ByteBuffer.wrap(y).order(ByteOrder.BIG_ENDIAN).putInt(off, (int) v);
      assertThat(x).as(seed).isEqualTo(y);
      Bytes.putIntLe(x, off, (int) v);
      ByteBuffer.wrap(y).order(ByteOrder.LITTLE_ENDIAN).putInt(off, (int) v);
      assertThat(x).as(seed).isEqualTo(y);
      Bytes.putU16Le(x, off, (int) v);
      ByteBuffer.wrap(y).order(ByteOrder.LITTLE_ENDIAN).putShort(off, (short) v);
      assertThat(x).as(seed).isEqualTo(y);
    }
  }

  @Test
  void outOfRangeThrowsTheArraysException() {
    byte[] b = new byte[7];
    assertThatThrownBy(() -> Bytes.getLongBe(b, 0))
        .isInstanceOf(ArrayIndexOutOfBoundsException.class);
    assertThatThrownBy(() -> Bytes.getLongLe(b, 0))
        .isInstanceOf(ArrayIndexOutOfBoundsException.class);
    assertThatThrownBy(() -> Bytes.putLongLe(b, 0, 1))
        .isInstanceOf(ArrayIndexOutOfBoundsException.class);
    assertThatThrownBy(() -> Bytes.getIntBe(b, 4))
        .isInstanceOf(ArrayIndexOutOfBoundsException.class);
    assertThatThrownBy(() -> Bytes.getIntLe(b, -1))
        .isInstanceOf(ArrayIndexOutOfBoundsException.class);
    assertThatThrownBy(() -> Bytes.getU16Le(b, 6))
        .isInstanceOf(ArrayIndexOutOfBoundsException.class);
    assertThatThrownBy(() -> Bytes.getUnsignedBe(b, 4, 4))
        .isInstanceOf(ArrayIndexOutOfBoundsException.class);
  }
}
