package dev.tidemark.tsdb.engine;

import dev.tidemark.tsdb.codec.CorruptRecordException;
import dev.tidemark.tsdb.kv.KvCursor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;

/**
 * Replays one open bucket's head log into its head series ({@code docs/architecture.md}, Recovery),
 * grouped by series and decoded on a second thread.
 *
 * <h2>Design note</h2>
 *
 * <p>The log is in append order: one step of a million series touches a million series before the
 * next step touches the first again, so replaying it entry by entry walks from series to series,
 * and each entry costs a chain of dependent cache misses (the series, its encoder, its bit buffer).
 * Replay only needs each series' own entries in log order: series are independent, and the bucket's
 * timestamp range, the byte count and the newest sequence number are a minimum, a maximum and a
 * sum. So a <i>decoder</i> thread reads the log into windows of about {@link #windowEntries}
 * entries, each a stable counting sort by series id (decode the window's records once to count the
 * entries per id, then again to place them), and the calling thread, which holds the write lock,
 * applies a window series by series, in id order, which is also the order in which recovery created
 * the series. A series' entries in a window are in log order, and windows are applied in log order,
 * so every series sees exactly the sequence the entry-by-entry replay gave it. The decoder reads
 * the store and fills the next window while the caller applies the current one; two windows exist
 * at most, so the memory is bounded.
 *
 * <p>Records of native histogram samples (format {@code 0x03}, {@link HeadLogHistograms}) are not
 * sorted: a window keeps them whole, in log order, and the caller applies them after the window's
 * float entries. A series holds one kind of sample in a bucket, so the two kinds of one series
 * never need ordering between them.
 */
final class HeadLogReplay {

  /** Upper bound of {@link #windowEntries}: 16 bytes of arrays each, 64 MiB a window. */
  static final int MAX_WINDOW_ENTRIES = 1 << 22;

  /** Lower bound of {@link #windowEntries}. */
  static final int MIN_WINDOW_ENTRIES = 1 << 12;

  private static final Window END = new Window(0);

  private final HeadState head;
  private final HeadBucket hb;
  private final int windowEntries;
  private final BlockingQueue<Window> full = new ArrayBlockingQueue<>(3);
  private final BlockingQueue<Window> free = new ArrayBlockingQueue<>(2);
  private volatile Throwable decoderFailure;
  private volatile boolean cancelled;

  /** Test hook: entries per window when positive (tests replay in windows of a few entries). */
  static volatile int windowEntriesForTests;

  /** Entries per window: a 1/1024 share of the heap at 16 bytes an entry, within the bounds. */
  static int windowEntries(long maxHeapBytes) {
    if (windowEntriesForTests > 0) {
      return windowEntriesForTests;
    }
    long n = maxHeapBytes / 1024 / 16 * 16;
    return (int) Math.max(MIN_WINDOW_ENTRIES, Math.min(MAX_WINDOW_ENTRIES, n));
  }

  HeadLogReplay(HeadState head, HeadBucket hb, int windowEntries) {
    this.head = head;
    this.hb = hb;
    this.windowEntries = windowEntries;
  }

  /**
   * Replays the records from {@code cursor}'s current one (it returned true from {@code next()}) to
   * its end, and closes it. Under the write lock; returns once every entry is in the head.
   *
   * @throws CorruptRecordException if a record cannot be decoded or names a series the bucket does
   *     not have
   */
  void replay(KvCursor cursor) {
    int ids = hb.nextId();
    free.add(new Window(ids));
    free.add(new Window(ids));
    Thread decoder = new Thread(() -> decode(cursor, ids), "tidemark-recovery-decoder");
    decoder.setDaemon(true);
    decoder.start();
    boolean done = false;
    try {
      while (true) {
        Window w = take(full);
        if (w == END) {
          break;
        }
        apply(w);
        free.add(w);
      }
      done = true;
    } finally {
      if (!done) {
        cancelled = true;
        decoder.interrupt();
      }
      HelperThreads.join(decoder);
    }
    HelperThreads.rethrow(decoderFailure, "head log decoder failed");
  }

  private void apply(Window w) {
    int freezeSamples = head.config.headFreezeSamples();
    long bytes = 0;
    int[] start = w.start;
    long[] ts = w.timestamps;
    long[] bits = w.valueBits;
    try {
      for (int id = 0; id < w.ids; id++) {
        int from = start[id];
        int to = start[id + 1];
        if (from == to) {
          continue;
        }
        HeadSeries hs = hb.byId(id);
        if (hs == null) {
          throw unknownSeries(id);
        }
        for (int i = from; i < to; i++) {
          bytes += hs.insertRecovered(ts[i], bits[i], freezeSamples, head.freezeScratch);
        }
      }
    } finally {
      head.headSampleBytes += bytes;
    }
    if (w.minT <= w.maxT) { // some float entry (histogram records note their own)
      hb.noteTimestamp(w.minT);
      hb.noteTimestamp(w.maxT);
    }
    applyHistograms(w);
    head.logSeq = Math.max(head.logSeq, w.maxSeq);
  }

  /** The window's histogram records, in log order. */
  private void applyHistograms(Window w) {
    long[] bytes = {0};
    try {
      for (byte[] value : w.histogramRecords) {
        HeadLogHistograms.decode(
            value,
            (id, t, h) -> {
              HeadSeries hs = id < 0 || id >= w.ids ? null : hb.byId(id);
              if (hs == null) {
                throw unknownSeries(id & 0xFFFF_FFFFL);
              }
              bytes[0] += hs.insertHistogramRecovered(t, h);
              hb.noteTimestamp(t);
            });
      }
    } finally {
      head.headSampleBytes += bytes[0];
      w.histogramRecords.clear();
    }
  }

  private CorruptRecordException unknownSeries(long id) {
    return new CorruptRecordException(
        "head log of bucket "
            + hb.bucket
            + " names series id "
            + id
            + " which has no ForwardIndex record");
  }

  // The decoder thread.

  private void decode(KvCursor cursor, int ids) {
    try (cursor) {
      Filler filler = new Filler(ids);
      boolean more = true;
      while (more && !cancelled) {
        Window w = free.take();
        more = filler.fill(cursor, w);
        full.put(w);
      }
      full.put(END);
    } catch (InterruptedException e) {
      // cancelled by the caller, which failed and does not wait for more windows
    } catch (Throwable t) {
      decoderFailure = t;
      full.offer(END); // room: the caller takes every window before giving one back
    }
  }

  /** Fills windows; the decoder thread's. */
  private final class Filler implements HeadLogBuffer.EntryConsumer {
    private final int ids;
    private final int[] counts;
    private final ArrayList<byte[]> records = new ArrayList<>();
    private boolean placing;
    private Window w;

    Filler(int ids) {
      this.ids = ids;
      this.counts = new int[ids];
    }

    /** Fills {@code w} from the cursor's current record on; false once the cursor is exhausted. */
    boolean fill(KvCursor cursor, Window w) {
      this.w = w;
      records.clear();
      Arrays.fill(counts, 0);
      w.entries = 0;
      w.minT = Long.MAX_VALUE;
      w.maxT = Long.MIN_VALUE;
      w.maxSeq = Long.MIN_VALUE;
      w.histogramRecords.clear();
      placing = false;
      boolean more;
      do {
        w.maxSeq = Math.max(w.maxSeq, Recovery.headLogSeq(cursor.key()));
        byte[] value = cursor.value();
        if (HeadLogHistograms.isHistogramFormat(value)) {
          w.histogramRecords.add(value); // applied whole, after the window's float entries
          w.entries++; // bounds the window's memory as an entry would
        } else {
          HeadLogBuffer.decode(value, this);
          records.add(value);
        }
        more = cursor.next();
      } while (more && w.entries < windowEntries);
      int[] start = w.start;
      start[0] = 0;
      for (int id = 0; id < ids; id++) {
        start[id + 1] = start[id] + counts[id];
        counts[id] = start[id]; // now the next free position of the id
      }
      w.ensureCapacity(w.entries);
      placing = true;
      for (byte[] value : records) {
        HeadLogBuffer.decode(value, this);
      }
      records.clear();
      return more;
    }

    @Override
    public void accept(int seriesId, long timestampMillis, long valueBits) {
      if (placing) {
        int p = counts[seriesId]++;
        w.timestamps[p] = timestampMillis;
        w.valueBits[p] = valueBits;
        return;
      }
      if (seriesId < 0 || seriesId >= ids) {
        throw unknownSeries(seriesId & 0xFFFF_FFFFL);
      }
      counts[seriesId]++;
      w.entries++;
      if (timestampMillis < w.minT) {
        w.minT = timestampMillis;
      }
      if (timestampMillis > w.maxT) {
        w.maxT = timestampMillis;
      }
    }
  }

  /**
   * A window of the log grouped by series id: id {@code i}'s entries are {@code
   * start[i]..start[i+1]}.
   */
  private static final class Window {
    final int ids;
    final int[] start;
    long[] timestamps = new long[0];
    long[] valueBits = new long[0];
    final ArrayList<byte[]> histogramRecords = new ArrayList<>();
    int entries;
    long minT;
    long maxT;
    long maxSeq;

    Window(int ids) {
      this.ids = ids;
      this.start = new int[ids + 1];
    }

    void ensureCapacity(int n) {
      if (timestamps.length < n) {
        timestamps = new long[n];
        valueBits = new long[n];
      }
    }
  }

  private static Window take(BlockingQueue<Window> q) {
    try {
      return q.take();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while replaying the head log", e);
    }
  }
}
