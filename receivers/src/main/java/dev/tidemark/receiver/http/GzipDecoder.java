package dev.tidemark.receiver.http;

import dev.tidemark.receiver.http.BoundedBody.BodyTooLarge;
import dev.tidemark.receiver.http.BoundedBody.Overloaded;
import dev.tidemark.tsdb.codec.Bytes;
import java.nio.ByteBuffer;
import java.util.zip.CRC32;
import java.util.zip.Inflater;

/**
 * A push decoder for gzip (RFC 1952) that inflates into a {@link BoundedBody} as compressed bytes
 * arrive, in whatever pieces they come: no thread waits for input, and inflation stops the moment
 * the body passes its limit (at most {@code limit + 1} bytes are ever inflated, so a "gzip bomb"
 * costs no more than a legitimate body of the limit's size).
 *
 * <p>Accepted as {@link java.util.zip.GZIPInputStream} accepts it: header flags {@code FEXTRA},
 * {@code FNAME}, {@code FCOMMENT} and {@code FHCRC} (checked), the trailer's CRC-32 and size
 * checked, several members concatenated; bytes after a member that do not start a valid member
 * header are ignored. Errors are {@link CorruptBodyException}s with a plain message.
 *
 * <p>Holds a native {@link Inflater}: {@link #close()} on every path. Not thread-safe.
 */
final class GzipDecoder implements BodyDecoder {
  private static final int FHCRC = 2;
  private static final int FEXTRA = 4;
  private static final int FNAME = 8;
  private static final int FCOMMENT = 16;

  private enum State {
    FIXED_HEADER,
    EXTRA_LENGTH,
    EXTRA,
    NAME,
    COMMENT,
    HEADER_CRC,
    INFLATE,
    TRAILER,
    /** A member ended; the next byte, if any, may start another. */
    MEMBER_END,
    /** Bytes after the last member that are not a member: ignored. */
    IGNORE
  }

  private final BoundedBody out;
  private final Inflater inflater = new Inflater(true);
  private final CRC32 crc = new CRC32();
  private final CRC32 headerCrc = new CRC32();
  private final byte[] field = new byte[10];
  private State state = State.FIXED_HEADER;
  private int fieldLength;
  private int flags;
  private int extraLeft;
  private int members;
  private long inputBytes;

  GzipDecoder(BoundedBody out) {
    this.out = out;
  }

  /** Decodes all of {@code in} (its position advances). */
  @Override
  public void write(ByteBuffer in) throws CorruptBodyException, BodyTooLarge, Overloaded {
    inputBytes += in.remaining();
    while (in.hasRemaining()) {
      switch (state) {
        case FIXED_HEADER -> {
          if (collect(in, 10)) {
            fixedHeader();
          }
        }
        case EXTRA_LENGTH -> {
          if (collect(in, 2)) {
            extraLeft = Bytes.getU16Le(field, 0);
            state = extraLeft > 0 ? State.EXTRA : afterExtra();
          }
        }
        case EXTRA -> {
          int n = Math.min(extraLeft, in.remaining());
          updateHeaderCrc(in, n);
          extraLeft -= n;
          if (extraLeft == 0) {
            state = afterExtra();
          }
        }
        case NAME, COMMENT -> {
          byte b = in.get();
          headerCrc.update(b);
          if (b == 0) {
            state = state == State.NAME ? afterName() : afterComment();
          }
        }
        case HEADER_CRC -> {
          if (collect(in, 2)) {
            int expected = Bytes.getU16Le(field, 0);
            if (expected != (int) (headerCrc.getValue() & 0xffff)) {
              headerError("corrupt gzip header (header checksum mismatch)");
            } else {
              state = State.INFLATE;
            }
          }
        }
        case INFLATE -> inflate(in);
        case TRAILER -> {
          if (collect(in, 8)) {
            trailer();
          }
        }
        case MEMBER_END -> {
          startMember();
        }
        case IGNORE -> in.position(in.limit());
      }
    }
  }

  /**
   * Checks that the input ended at a member's end.
   *
   * @throws CorruptBodyException if the body is empty or the stream was cut short
   */
  @Override
  public void finish() throws CorruptBodyException {
    switch (state) {
      case MEMBER_END, IGNORE -> {}
      default -> {
        if (members > 0 && state.compareTo(State.INFLATE) < 0) {
          return; // a cut header after a complete member: ignored, as GZIPInputStream does
        }
        throw new CorruptBodyException(
            inputBytes == 0 ? "empty body" : "unexpected end of the gzip stream");
      }
    }
  }

  @Override
  public void close() {
    inflater.end();
  }

  /** Copies bytes of {@code in} into {@link #field} until it holds {@code n}; true when it does. */
  private boolean collect(ByteBuffer in, int n) {
    int take = Math.min(n - fieldLength, in.remaining());
    in.get(field, fieldLength, take);
    fieldLength += take;
    if (fieldLength < n) {
      return false;
    }
    fieldLength = 0;
    if (state != State.TRAILER && state != State.HEADER_CRC) {
      headerCrc.update(field, 0, n);
    }
    return true;
  }

  private void updateHeaderCrc(ByteBuffer in, int n) {
    ByteBuffer slice = in.slice();
    slice.limit(n);
    headerCrc.update(slice);
    in.position(in.position() + n);
  }

  private void fixedHeader() throws CorruptBodyException {
    if ((field[0] & 0xff) != 0x1f || (field[1] & 0xff) != 0x8b) {
      headerError("not in gzip format");
      return;
    }
    if (field[2] != 8) {
      headerError("unsupported gzip compression method " + (field[2] & 0xff));
      return;
    }
    flags = field[3] & 0xff;
    state = (flags & FEXTRA) != 0 ? State.EXTRA_LENGTH : afterExtra();
  }

  private State afterExtra() {
    return (flags & FNAME) != 0 ? State.NAME : afterName();
  }

  private State afterName() {
    return (flags & FCOMMENT) != 0 ? State.COMMENT : afterComment();
  }

  private State afterComment() {
    return (flags & FHCRC) != 0 ? State.HEADER_CRC : State.INFLATE;
  }

  /** A bad header: an error for the first member; after a complete member, the rest is ignored. */
  private void headerError(String message) throws CorruptBodyException {
    if (members == 0) {
      throw new CorruptBodyException(message);
    }
    state = State.IGNORE;
  }

  private void inflate(ByteBuffer in) throws CorruptBodyException, BodyTooLarge, Overloaded {
    if (Inflation.inflate(inflater, in, out, crc)) {
      state = State.TRAILER; // the inflater left in's position just after the deflate data
    }
  }

  private void trailer() throws CorruptBodyException {
    long expectedCrc = le32(0);
    long expectedSize = le32(4);
    if (expectedCrc != crc.getValue()
        || expectedSize != (inflater.getBytesWritten() & 0xffffffffL)) {
      throw new CorruptBodyException("corrupt gzip trailer (checksum or size mismatch)");
    }
    members++;
    state = State.MEMBER_END;
  }

  private void startMember() {
    inflater.reset();
    crc.reset();
    headerCrc.reset();
    fieldLength = 0;
    state = State.FIXED_HEADER;
  }

  private long le32(int at) {
    return Integer.toUnsignedLong(Bytes.getIntLe(field, at));
  }
}
