package dev.tidemark.translator.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.CodedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class WireReaderTest {

  /** Bytes written by protobuf-java's own encoder. */
  private interface Writes {
    void to(CodedOutputStream out) throws IOException;
  }

  private static byte[] wire(Writes w) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    CodedOutputStream out = CodedOutputStream.newInstance(bytes);
    w.to(out);
    out.flush();
    return bytes.toByteArray();
  }

  @Test
  void readsWhatProtobufJavaWritesAsProtobufJavaReadsIt() throws IOException {
    long seed = new SplittableRandom().nextLong();
    SplittableRandom rnd = new SplittableRandom(seed);
    for (int i = 0; i < 2000; i++) {
      long v = rnd.nextLong() >>> rnd.nextInt(64);
      long f64 = rnd.nextLong();
      int f32 = rnd.nextInt();
      byte[] s = new byte[rnd.nextInt(40)];
      rnd.nextBytes(s);
      byte[] b =
          wire(
              out -> {
                out.writeUInt64(1, v);
                out.writeFixed64(2, f64);
                out.writeFixed32(3, f32);
                out.writeByteArray(4, s);
                out.writeUInt64(536_870_911, v); // the largest field number
              });
      WireReader r = new WireReader(b, 0);
      CodedInputStream in = CodedInputStream.newInstance(b);
      assertThat(r.tag(b.length)).as("seed %d", seed).isEqualTo(in.readTag());
      assertThat(r.varint(b.length)).as("seed %d", seed).isEqualTo(in.readUInt64());
      assertThat(r.tag(b.length)).isEqualTo(in.readTag());
      assertThat(r.fixed64(b.length)).isEqualTo(in.readFixed64());
      assertThat(r.tag(b.length)).isEqualTo(in.readTag());
      assertThat(r.fixed32(b.length)).isEqualTo(in.readFixed32());
      assertThat(r.tag(b.length)).isEqualTo(in.readTag());
      int n = r.length(b.length);
      assertThat(n).isEqualTo(s.length);
      r.pos += n;
      int tag = r.tag(b.length);
      assertThat(tag >>> 3).isEqualTo(536_870_911);
      r.skip(tag, b.length);
      assertThat(r.pos).isEqualTo(b.length);
    }
  }

  @Test
  void skipsEveryWireTypeAndGroupsOnlyWhenAllowed() throws IOException {
    byte[] b =
        wire(
            out -> {
              out.writeUInt64(1, 300);
              out.writeFixed64(2, 7);
              out.writeString(3, "x");
              out.writeFixed32(4, 9);
              out.writeTag(5, WireReader.WT_START_GROUP);
              out.writeUInt64(1, 1);
              out.writeTag(6, WireReader.WT_START_GROUP);
              out.writeTag(6, WireReader.WT_END_GROUP);
              out.writeTag(5, WireReader.WT_END_GROUP);
            });
    WireReader r = new WireReader(b, 0);
    for (int i = 0; i < 4; i++) {
      r.skip(r.tag(b.length), b.length);
    }
    int at = r.pos;
    int group = r.tag(b.length);
    assertThatThrownBy(() -> r.skip(group, b.length))
        .isInstanceOf(WireReader.Malformed.class)
        .hasMessage("unsupported wire type 3 for field 5");
    r.pos = at;
    r.skip(r.tag(b.length), b.length, 0);
    assertThat(r.pos).isEqualTo(b.length);
  }

  @Test
  void everyTruncationThrowsAndNoReadPassesTheEnd() throws IOException {
    byte[] b =
        wire(
            out -> {
              out.writeUInt64(1, Long.MAX_VALUE);
              out.writeFixed64(2, 7);
              out.writeString(3, "hello");
              out.writeFixed32(4, 9);
            });
    for (int end = 0; end < b.length; end++) {
      WireReader r = new WireReader(b, 0);
      int stop = end;
      assertThatThrownBy(
              () -> {
                while (true) {
                  r.skip(r.tag(stop), stop);
                  if (r.pos == stop) {
                    throw new AssertionError("the truncated input read to its end at " + stop);
                  }
                }
              })
          .as("end %d", end)
          .satisfiesAnyOf(
              e -> assertThat(e).isInstanceOf(WireReader.Malformed.class),
              e -> assertThat(e).isInstanceOf(AssertionError.class));
      assertThat(r.pos).isLessThanOrEqualTo(end);
    }
  }

  @Test
  void illegalTagsLengthsAndVarintsAreMalformed() {
    byte[] zeroField = {0x02, 0x00};
    assertThatThrownBy(() -> new WireReader(zeroField, 0).tag(2))
        .isInstanceOf(WireReader.Malformed.class)
        .hasMessage("illegal tag 2 at byte 0");
    byte[] over32 = {(byte) 0x88, (byte) 0x80, (byte) 0x80, (byte) 0x80, 0x10};
    assertThatThrownBy(() -> new WireReader(over32, 0).tag(5))
        .hasMessageStartingWith("illegal tag ");
    byte[] longLength = {0x0A, 0x05, 0x01};
    WireReader r = new WireReader(longLength, 0);
    r.tag(3);
    assertThatThrownBy(() -> r.length(3))
        .hasMessage("length 5 at byte 2 runs past the end of its message");
    byte[] eleven = new byte[11];
    java.util.Arrays.fill(eleven, (byte) 0x80);
    assertThatThrownBy(() -> new WireReader(eleven, 0).varint(11))
        .hasMessage("varint over 10 bytes at byte 0");
    byte[] wt7 = {0x0F};
    WireReader w = new WireReader(wt7, 0);
    int tag = w.tag(1);
    assertThatThrownBy(() -> w.skip(tag, 1, 0)).hasMessage("unsupported wire type 7 for field 1");
    byte[] strayEnd = {0x0C};
    WireReader e = new WireReader(strayEnd, 0);
    int end = e.tag(1);
    assertThatThrownBy(() -> e.skip(end, 1, 0))
        .hasMessage("end of group 1 outside a group at byte 1");
  }
}
