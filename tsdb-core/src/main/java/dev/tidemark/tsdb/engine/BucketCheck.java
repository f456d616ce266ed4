package dev.tidemark.tsdb.engine;

import dev.tidemark.tsdb.codec.ChunkDecoder;
import dev.tidemark.tsdb.codec.CorruptRecordException;
import dev.tidemark.tsdb.codec.ForwardIndexValue;
import dev.tidemark.tsdb.codec.HistogramDecoder;
import dev.tidemark.tsdb.codec.InvertedIndexValue;
import dev.tidemark.tsdb.codec.Keys;
import dev.tidemark.tsdb.codec.RecordType;
import dev.tidemark.tsdb.codec.SeriesDictionaryValue;
import dev.tidemark.tsdb.codec.TimeBucket;
import dev.tidemark.tsdb.codec.TimeSeriesValue;
import dev.tidemark.tsdb.engine.HeadBucket.Fingerprint;
import dev.tidemark.tsdb.engine.RepairReport.Action;
import dev.tidemark.tsdb.engine.StoreProblem.Kind;
import dev.tidemark.tsdb.kv.KvCursor;
import dev.tidemark.tsdb.kv.KvReader;
import dev.tidemark.tsdb.kv.WriteBatch;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.NativeHistogram;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.roaringbitmap.IntIterator;
import org.roaringbitmap.RoaringBitmap;

/**
 * Checks the records of one bucket against each other and plans the write batch that makes them
 * consistent ({@link StoreVerifier}). The ForwardIndex is the reference: a series exists in the
 * bucket when it has a decodable ForwardIndex record, and every other record type is checked and
 * rebuilt against that set.
 *
 * <ol>
 *   <li>ForwardIndex: each record decodes (else it is dropped, and its series with it).
 *   <li>TimeSeries: each record decodes entirely and has a ForwardIndex record (else dropped:
 *       without labels its samples cannot be read, and {@code Engine} fails reopening the bucket).
 *   <li>HeadLog: each record decodes and names known series only (else the samples of unknown
 *       series are dropped and the record rewritten in format 2, or deleted when none is left). A
 *       bucket with HeadLog records left is <em>open</em>: recovery replays it.
 *   <li>HeadChunk: each record (a frozen part of an open bucket's head series that the engine wrote
 *       before it stopped; recovery deletes them all and rebuilds the head from the head log)
 *       decodes entirely and has a ForwardIndex record (else dropped: no sample depends on it).
 *   <li>SeriesDictionary: each entry names exactly the series whose labels hash to its fingerprint,
 *       rebuilt from the ForwardIndex when not.
 *   <li>InvertedIndex: each posting names only series that carry its label pair (the all-series
 *       posting: only known series). In a <em>sealed</em> bucket (no HeadLog left) every series is
 *       in the all-series posting and the posting of each of its labels, so the postings are set to
 *       exactly what the ForwardIndex implies; in an open bucket postings are only cleaned, since
 *       the next seal writes them all from the ForwardIndex anyway.
 * </ol>
 *
 * <p>Reads through one {@link KvReader} (a snapshot); {@link #fix} collects the changes, written by
 * the caller in one atomic batch. Single use, one thread.
 */
final class BucketCheck {

  /** An InvertedIndex key's label pair; {@code ("", "")} is the all-series posting. */
  private record Pair(String name, String value) {
    @Override
    public String toString() {
      return name.isEmpty() ? "the all-series posting" : "posting " + name + "=\"" + value + "\"";
    }
  }

  private static final Pair ALL = new Pair("", "");

  final TimeBucket bucket;

  /** The changes that make the bucket consistent; empty when it is. */
  final WriteBatch fix = new WriteBatch();

  private final KvReader reader;
  private final VerifyReport.Builder report;
  private final Map<Action, Long> actions;

  /** Records of the bucket, of every type, decodable or not. */
  long records;

  /** Series with a decodable ForwardIndex record: id → labels. */
  private final HashMap<Integer, Labels> series = new HashMap<>();

  private boolean headLogLeft;

  BucketCheck(
      KvReader reader, TimeBucket bucket, VerifyReport.Builder report, Map<Action, Long> actions) {
    this.reader = reader;
    this.bucket = bucket;
    this.report = report;
    this.actions = actions;
  }

  /** Runs every check. Returns whether the bucket keeps series after the repair. */
  boolean run() {
    forwardIndex();
    timeSeries();
    headLog();
    headChunks();
    dictionary();
    postings();
    return !series.isEmpty();
  }

  int seriesCount() {
    return series.size();
  }

  /** Whether HeadLog records remain after the repair (the engine replays the bucket). */
  boolean open() {
    return headLogLeft;
  }

  // ------------------------------------------------------------------------------------------

  private void forwardIndex() {
    try (KvCursor c = scan(RecordType.FORWARD_INDEX)) {
      while (c.next()) {
        records++;
        byte[] key = c.key();
        long id = -1;
        try {
          int sid = Keys.seriesId(key);
          id = Integer.toUnsignedLong(sid);
          series.put(sid, ForwardIndexValue.decode(c.value()).labels());
        } catch (CorruptRecordException e) {
          undecodable(RecordType.FORWARD_INDEX, key, id, e.getMessage());
        }
      }
    }
  }

  private void timeSeries() {
    TimeSeriesValue.Decoders decoders = new TimeSeriesValue.Decoders();
    HistogramDecoder histogramDecoder = new HistogramDecoder();
    try (KvCursor c = scan(RecordType.TIME_SERIES)) {
      while (c.next()) {
        records++;
        byte[] key = c.key();
        long id = -1;
        int samples;
        try {
          id = Integer.toUnsignedLong(Keys.seriesId(key));
          samples = 0;
          byte[] v = c.value();
          if (v.length > 0 && TimeSeriesValue.isHistogramEncoding(v[0] & 0xFF)) {
            // every sample decoded and validated as the model validates it
            HistogramDecoder d = TimeSeriesValue.openHistogram(histogramDecoder, v);
            while (d.next()) {
              d.histogram();
              samples++;
            }
          } else {
            ChunkDecoder d = decoders.open(v);
            while (d.next()) {
              samples++;
            }
          }
        } catch (CorruptRecordException e) {
          undecodable(RecordType.TIME_SERIES, key, id, e.getMessage());
          continue;
        }
        if (!series.containsKey((int) id)) {
          problem(
              Kind.TIME_SERIES_UNKNOWN_SERIES,
              id,
              "chunk of " + samples + " samples of a series without labels");
          fix.delete(key);
          count(Action.TIME_SERIES_DELETED, 1);
          count(Action.SAMPLES_DROPPED, samples);
        }
      }
    }
  }

  private void headLog() {
    try (KvCursor c = scan(RecordType.HEAD_LOG)) {
      while (c.next()) {
        records++;
        byte[] key = c.key();
        if (key.length != Keys.BUCKET_PREFIX_LENGTH + 8) {
          undecodable(
              RecordType.HEAD_LOG,
              key,
              -1,
              "key of " + key.length + " bytes, expected " + (Keys.BUCKET_PREFIX_LENGTH + 8));
          continue;
        }
        List<long[]> entries = new ArrayList<>();
        List<NativeHistogram> histograms = new ArrayList<>(); // format 0x03: entry i's histogram
        boolean histogramFormat = HeadLogHistograms.isHistogramFormat(c.value());
        try {
          if (histogramFormat) {
            HeadLogHistograms.decode(
                c.value(),
                (id, t, h) -> {
                  entries.add(new long[] {id, t, 0});
                  histograms.add(h);
                });
          } else {
            HeadLogBuffer.decode(c.value(), (id, t, bits) -> entries.add(new long[] {id, t, bits}));
          }
        } catch (CorruptRecordException e) {
          undecodable(RecordType.HEAD_LOG, key, -1, e.getMessage());
          continue;
        }
        TreeSet<Long> unknown = new TreeSet<>();
        int dropped = 0;
        for (long[] e : entries) {
          if (!series.containsKey((int) e[0])) {
            unknown.add(Integer.toUnsignedLong((int) e[0]));
            dropped++;
          }
        }
        if (dropped == 0) {
          headLogLeft = true;
          continue;
        }
        problem(
            Kind.HEAD_LOG_UNKNOWN_SERIES,
            unknown.first(),
            "record "
                + StoreVerifier.hex(key)
                + ": "
                + dropped
                + " of "
                + entries.size()
                + " samples name series "
                + abbreviate(unknown)
                + " (replay fails on them)");
        count(Action.SAMPLES_DROPPED, dropped);
        if (dropped == entries.size()) {
          fix.delete(key);
          count(Action.HEAD_LOG_RECORDS_DELETED, 1);
          continue;
        }
        if (histogramFormat) {
          HeadLogHistograms kept = new HeadLogHistograms();
          for (int i = 0; i < entries.size(); i++) {
            long[] e = entries.get(i);
            if (series.containsKey((int) e[0])) {
              kept.add((int) e[0], e[1], histograms.get(i));
            }
          }
          fix.put(key, kept.toByteArray());
        } else {
          HeadLogBuffer kept = new HeadLogBuffer();
          for (long[] e : entries) {
            if (series.containsKey((int) e[0])) {
              kept.add((int) e[0], e[1], e[2]);
            }
          }
          fix.put(key, kept.toByteArray());
        }
        count(Action.HEAD_LOG_RECORDS_REWRITTEN, 1);
        headLogLeft = true;
      }
    }
  }

  private void headChunks() {
    TimeSeriesValue.Decoders decoders = new TimeSeriesValue.Decoders();
    try (KvCursor c = scan(RecordType.HEAD_CHUNK)) {
      while (c.next()) {
        records++;
        byte[] key = c.key();
        long id = -1;
        int samples;
        try {
          id = Integer.toUnsignedLong(Keys.headChunkSeriesId(key));
          ChunkDecoder d = decoders.open(c.value());
          samples = 0;
          while (d.next()) {
            samples++;
          }
        } catch (CorruptRecordException e) {
          undecodable(RecordType.HEAD_CHUNK, key, id, e.getMessage());
          continue;
        }
        if (!series.containsKey((int) id)) {
          problem(
              Kind.HEAD_CHUNK_UNKNOWN_SERIES,
              id,
              "part "
                  + Integer.toUnsignedLong(Keys.headChunkPart(key))
                  + " of "
                  + samples
                  + " samples of a series without labels");
          fix.delete(key);
          count(Action.HEAD_CHUNKS_DELETED, 1);
        }
      }
    }
  }

  private void dictionary() {
    Map<Fingerprint, int[]> expected = new LinkedHashMap<>();
    TreeMap<Integer, Labels> byId = new TreeMap<>(Integer::compareUnsigned);
    byId.putAll(series);
    for (Map.Entry<Integer, Labels> e : byId.entrySet()) { // ascending ids, as the engine adds them
      expected.merge(Fingerprint.of(e.getValue()), new int[] {e.getKey()}, BucketCheck::concat);
    }
    Map<Fingerprint, int[]> stored = new HashMap<>();
    try (KvCursor c = scan(RecordType.SERIES_DICTIONARY)) {
      while (c.next()) {
        records++;
        byte[] key = c.key();
        Fingerprint fp;
        int[] ids;
        try {
          fp = new Fingerprint(Keys.fingerprintHigh(key), Keys.fingerprintLow(key));
          ids = SeriesDictionaryValue.decode(c.value());
        } catch (CorruptRecordException e) {
          undecodable(RecordType.SERIES_DICTIONARY, key, -1, e.getMessage());
          continue;
        }
        stored.put(fp, ids);
        for (int id : ids) {
          Labels labels = series.get(id);
          if (labels == null) {
            problem(
                Kind.DICTIONARY_UNKNOWN_SERIES,
                Integer.toUnsignedLong(id),
                "entry " + fingerprint(fp));
          } else if (!Fingerprint.of(labels).equals(fp)) {
            problem(
                Kind.DICTIONARY_WRONG_FINGERPRINT,
                Integer.toUnsignedLong(id),
                "entry "
                    + fingerprint(fp)
                    + " names "
                    + labels
                    + ", whose fingerprint is "
                    + fingerprint(Fingerprint.of(labels)));
          }
        }
        int[] want = expected.get(fp);
        if (want == null) {
          fix.delete(key);
          count(Action.DICTIONARY_ENTRIES_DELETED, 1);
        } else if (!sameSet(ids, want)) {
          fix.put(key, SeriesDictionaryValue.encode(want));
          count(Action.DICTIONARY_ENTRIES_WRITTEN, 1);
        }
      }
    }
    for (Map.Entry<Fingerprint, int[]> e : expected.entrySet()) {
      int[] have = stored.get(e.getKey());
      for (int id : e.getValue()) {
        if (have == null || !contains(have, id)) {
          problem(
              Kind.SERIES_NOT_IN_DICTIONARY,
              Integer.toUnsignedLong(id),
              series.get(id) + " is not in entry " + fingerprint(e.getKey()));
        }
      }
      if (have == null) {
        Fingerprint fp = e.getKey();
        fix.put(
            Keys.seriesDictionary(bucket, fp.high(), fp.low()),
            SeriesDictionaryValue.encode(e.getValue()));
        count(Action.DICTIONARY_ENTRIES_WRITTEN, 1);
      }
    }
  }

  private void postings() {
    boolean sealed = !headLogLeft;
    Map<Pair, RoaringBitmap> expected = new HashMap<>();
    for (Map.Entry<Integer, Labels> e : series.entrySet()) {
      int id = e.getKey();
      Labels l = e.getValue();
      expected.computeIfAbsent(ALL, k -> new RoaringBitmap()).add(id);
      for (int i = 0; i < l.size(); i++) {
        expected.computeIfAbsent(new Pair(l.name(i), l.value(i)), k -> new RoaringBitmap()).add(id);
      }
    }
    Map<Pair, RoaringBitmap> stored = new HashMap<>();
    try (KvCursor c = scan(RecordType.INVERTED_INDEX)) {
      while (c.next()) {
        records++;
        byte[] key = c.key();
        Pair pair;
        RoaringBitmap have;
        try {
          String[] nv = Keys.invertedIndexLabel(key);
          pair = new Pair(nv[0], nv[1]);
          have = InvertedIndexValue.decode(c.value());
        } catch (CorruptRecordException e) {
          undecodable(RecordType.INVERTED_INDEX, key, -1, e.getMessage());
          continue;
        }
        stored.put(pair, have);
        RoaringBitmap valid = new RoaringBitmap();
        for (IntIterator it = have.getIntIterator(); it.hasNext(); ) {
          int id = it.next();
          Labels l = series.get(id);
          if (l == null) {
            problem(
                Kind.POSTING_UNKNOWN_SERIES,
                Integer.toUnsignedLong(id),
                pair + " names it, but it has no ForwardIndex record");
          } else if (!pair.equals(ALL) && !pair.value().equals(l.get(pair.name()))) {
            problem(Kind.POSTING_WRONG_SERIES, Integer.toUnsignedLong(id), pair + " names " + l);
          } else {
            valid.add(id);
          }
        }
        if (have.isEmpty()) {
          problem(Kind.POSTING_EMPTY, -1, pair + " is empty");
        }
        RoaringBitmap want = sealed ? expected.getOrDefault(pair, new RoaringBitmap()) : valid;
        if (want.isEmpty()) {
          fix.delete(key);
          count(Action.POSTINGS_DELETED, 1);
        } else if (!want.equals(have)) {
          fix.put(key, InvertedIndexValue.encode(want.clone()));
          count(Action.POSTINGS_WRITTEN, 1);
        }
      }
    }
    if (!sealed) {
      return; // the next seal writes every posting of the bucket from its ForwardIndex records
    }
    RoaringBitmap none = new RoaringBitmap();
    TreeMap<Integer, Labels> byId = new TreeMap<>(Integer::compareUnsigned);
    byId.putAll(series);
    for (Map.Entry<Integer, Labels> e : byId.entrySet()) {
      int id = e.getKey();
      Labels l = e.getValue();
      List<Pair> missing = new ArrayList<>();
      if (!stored.getOrDefault(ALL, none).contains(id)) {
        missing.add(ALL);
      }
      for (int i = 0; i < l.size(); i++) {
        Pair p = new Pair(l.name(i), l.value(i));
        if (!stored.getOrDefault(p, none).contains(id)) {
          missing.add(p);
        }
      }
      if (!missing.isEmpty()) {
        problem(
            Kind.SERIES_NOT_IN_POSTINGS,
            Integer.toUnsignedLong(id),
            l
                + " is missing from "
                + missing.get(0)
                + (missing.size() > 1 ? " and " + (missing.size() - 1) + " more postings" : ""));
      }
    }
    for (Map.Entry<Pair, RoaringBitmap> e : expected.entrySet()) {
      if (!stored.containsKey(e.getKey())) {
        Pair p = e.getKey();
        byte[] key =
            p.equals(ALL)
                ? Keys.invertedIndexAllSeries(bucket)
                : Keys.invertedIndex(bucket, p.name(), p.value());
        fix.put(key, InvertedIndexValue.encode(e.getValue().clone()));
        count(Action.POSTINGS_WRITTEN, 1);
      }
    }
  }

  // ------------------------------------------------------------------------------------------

  private KvCursor scan(RecordType type) {
    return reader.scanPrefix(Keys.bucketPrefix(type, bucket));
  }

  private void undecodable(RecordType type, byte[] key, long id, String why) {
    problem(
        Kind.UNDECODABLE_RECORD,
        id,
        StoreVerifier.name(type) + " record " + StoreVerifier.hex(key) + ": " + why);
    fix.delete(key);
    count(Action.RECORDS_DELETED, 1);
  }

  private void problem(Kind kind, long id, String detail) {
    report.add(new StoreProblem(kind, bucket, id, detail));
  }

  private void count(Action a, long n) {
    if (n > 0) {
      actions.merge(a, n, Long::sum);
    }
  }

  private static String fingerprint(Fingerprint fp) {
    return String.format("%016x%016x", fp.high(), fp.low());
  }

  private static String abbreviate(TreeSet<Long> ids) {
    List<Long> first = new ArrayList<>(ids).subList(0, Math.min(ids.size(), 5));
    return first + (ids.size() > 5 ? " and " + (ids.size() - 5) + " more" : "");
  }

  private static int[] concat(int[] a, int[] b) {
    int[] out = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  private static boolean contains(int[] ids, int id) {
    for (int x : ids) {
      if (x == id) {
        return true;
      }
    }
    return false;
  }

  private static boolean sameSet(int[] a, int[] b) {
    int[] x = Arrays.stream(a).distinct().sorted().toArray();
    int[] y = Arrays.stream(b).distinct().sorted().toArray();
    return Arrays.equals(x, y);
  }
}
