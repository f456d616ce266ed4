package dev.tidemark.tsdb.engine;

import dev.tidemark.tsdb.codec.BucketListValue;
import dev.tidemark.tsdb.codec.Bytes;
import dev.tidemark.tsdb.codec.CorruptRecordException;
import dev.tidemark.tsdb.codec.Keys;
import dev.tidemark.tsdb.codec.MetadataValue;
import dev.tidemark.tsdb.codec.RecordType;
import dev.tidemark.tsdb.codec.TimeBucket;
import dev.tidemark.tsdb.engine.RepairReport.Action;
import dev.tidemark.tsdb.engine.StoreProblem.Kind;
import dev.tidemark.tsdb.kv.KeyRanges;
import dev.tidemark.tsdb.kv.KvCursor;
import dev.tidemark.tsdb.kv.KvReader;
import dev.tidemark.tsdb.kv.KvSnapshot;
import dev.tidemark.tsdb.kv.KvStore;
import dev.tidemark.tsdb.kv.WriteBatch;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Consumer;

/**
 * Checks every record of a store against the others, offline, and repairs what is inconsistent
 * ({@code tidemark verify}; {@code docs/architecture.md}, "Verification and repair").
 *
 * <p>What is checked: the schema record; that every Metadata record decodes; that every key is a
 * record key of a known type in a valid bucket; that the BucketList names exactly the buckets that
 * have records of any type; and per bucket ({@link BucketCheck}) that every record decodes, that
 * SeriesDictionary, InvertedIndex (the all-series posting included), TimeSeries and HeadLog records
 * name only series with a ForwardIndex record, that the dictionary and, in sealed buckets, the
 * postings hold every such series, each under its own fingerprint and label pairs.
 *
 * <p>What a repair does, without losing a sample that can be read: buckets with readable records go
 * back into the BucketList (their data was invisible; the engine's recovery replays their head
 * log); ids without a ForwardIndex record leave the postings (a posting left empty is deleted);
 * missing dictionary entries and postings are rebuilt from the ForwardIndex records; records that
 * cannot be decoded, TimeSeries records without a ForwardIndex record and HeadLog samples of
 * unknown series are dropped (a HeadLog record is rewritten without them). Each bucket's changes
 * are one atomic write batch; the BucketList is written last, in its own batch, so a repair that
 * stops half-way leaves a store that a second run finishes. A store whose schema record is missing
 * or of another version is not touched.
 *
 * <p>The store must not be in use by an engine: {@code Engine} keeps the BucketList and the head in
 * memory. Reads go through one snapshot. Stateless and thread-safe; each call is one pass over the
 * store.
 */
public final class StoreVerifier {

  private StoreVerifier() {}

  /** Checks every record; writes nothing. */
  public static VerifyReport verify(KvStore store) {
    try (KvSnapshot snap = store.snapshot()) {
      return check(snap, batch -> {}).report;
    }
  }

  /**
   * Checks every record, writes the changes that make the store consistent, then checks again.
   * Writes nothing when the schema record is missing or of another version ({@link
   * RepairReport#refusal()}).
   */
  public static RepairReport repair(KvStore store) {
    Outcome before;
    try (KvSnapshot snap = store.snapshot()) {
      // Writes go to the store while the check reads the snapshot taken before any of them.
      before =
          check(
              snap,
              batch -> {
                if (!batch.isEmpty()) {
                  store.write(batch);
                }
              });
    }
    store.sync();
    if (before.refusal != null) {
      return new RepairReport(before.report, Map.of(), before.report, before.refusal);
    }
    return new RepairReport(before.report, before.actions, verify(store), null);
  }

  /** A check's report, the repair actions it planned, and why a repair must not write. */
  private record Outcome(VerifyReport report, Map<Action, Long> actions, String refusal) {}

  /** Checks everything; hands each planned batch to {@code sink} unless repairing is refused. */
  private static Outcome check(KvReader r, Consumer<WriteBatch> sink) {
    VerifyReport.Builder report = new VerifyReport.Builder();
    Map<Action, Long> actions = new EnumMap<>(Action.class);
    String refusal = checkSchema(r, report);
    Consumer<WriteBatch> out = refusal == null ? sink : batch -> {};

    TreeSet<TimeBucket> listed = new TreeSet<>();
    byte[] list = r.get(Keys.bucketList());
    boolean listReadable = true;
    if (list != null) {
      report.records++;
      try {
        listed.addAll(BucketListValue.decode(list));
      } catch (CorruptRecordException e) {
        report.add(
            new StoreProblem(Kind.UNDECODABLE_RECORD, null, -1, "BucketList: " + e.getMessage()));
        listReadable = false;
      }
    }
    report.listedBuckets = listed.size();

    WriteBatch global = new WriteBatch();
    TreeSet<TimeBucket> buckets = new TreeSet<>(listed);
    buckets.addAll(discover(r, report, global, actions));

    TreeSet<TimeBucket> keep = new TreeSet<>();
    for (TimeBucket b : buckets) {
      if (unfinishedCompaction(b, listed, listReadable, buckets)) {
        // Never added back: its finer buckets, still listed, hold the data (docs/format.md).
        report.add(
            new StoreProblem(
                Kind.UNFINISHED_COMPACTION, b, -1, "not in the BucketList; deleted on repair"));
        for (RecordType type : HeadState.BUCKET_RECORD_TYPES) {
          byte[] prefix = Keys.bucketPrefix(type, b);
          global.deleteRange(prefix, KeyRanges.prefixEnd(prefix));
        }
        actions.merge(Action.UNFINISHED_COMPACTIONS_DELETED, 1L, Long::sum);
        continue;
      }
      BucketCheck bc = new BucketCheck(r, b, report, actions);
      boolean readable = bc.run();
      report.records += bc.records;
      if (bc.records > 0) {
        report.bucketsWithRecords++;
        if (!listed.contains(b)) {
          report.add(
              new StoreProblem(
                  Kind.BUCKET_NOT_LISTED,
                  b,
                  -1,
                  bc.records
                      + " records, "
                      + bc.seriesCount()
                      + " series"
                      + (bc.open() ? ", a head log to replay" : "")
                      + ", not in the BucketList"));
        }
      } else if (listed.contains(b)) {
        report.add(
            new StoreProblem(
                Kind.LISTED_BUCKET_EMPTY, b, -1, "in the BucketList, without records"));
      }
      if (readable) {
        keep.add(b);
      }
      out.accept(bc.fix);
    }

    if (!keep.equals(listed) || !listReadable || (list == null && !keep.isEmpty())) {
      long added = keep.stream().filter(b -> !listed.contains(b)).count();
      long removed = listed.stream().filter(b -> !keep.contains(b)).count();
      if (added > 0) {
        actions.merge(Action.BUCKETS_LISTED, added, Long::sum);
      }
      if (removed > 0) {
        actions.merge(Action.BUCKETS_UNLISTED, removed, Long::sum);
      }
      global.put(Keys.bucketList(), BucketListValue.encode(keep));
    }
    out.accept(global); // last: the buckets it lists are consistent by now
    return new Outcome(report.build(), actions, refusal);
  }

  /**
   * Whether {@code b} holds records of a compaction interrupted before its switch: a coarse bucket
   * (size code above one hour, which only the compactor writes) that the BucketList does not name,
   * or, when the BucketList is unreadable, one that overlaps a finer bucket with records (after a
   * switch the finer buckets' records are gone in the same batch).
   */
  private static boolean unfinishedCompaction(
      TimeBucket b, TreeSet<TimeBucket> listed, boolean listReadable, TreeSet<TimeBucket> found) {
    if (b.sizeCode() == TimeBucket.ONE_HOUR || listed.contains(b)) {
      return false;
    }
    if (listReadable) {
      return true;
    }
    for (TimeBucket o : found) {
      if (o.sizeCode() < b.sizeCode()
          && o.startMillis() < b.endMillis()
          && b.startMillis() < o.endMillis()) {
        return true;
      }
    }
    return false;
  }

  /** Checks the schema record; returns why a repair must not write, or null. */
  private static String checkSchema(KvReader r, VerifyReport.Builder report) {
    byte[] v = r.get(Keys.schema());
    String problem = null;
    if (v == null) {
      try (KvCursor c = r.scan(null, null)) {
        if (c.next()) {
          problem = "the store holds data but no schema record: it was not written by Tidemark";
        }
      }
    } else {
      report.records++;
      try {
        new SchemaRecord(
                SchemaRecord.CURRENT_VERSION,
                EngineConfig.BUCKET_SIZE_CODE,
                SchemaRecord.HASH_XXH3_128)
            .checkCompatible(SchemaRecord.decode(v));
      } catch (CorruptRecordException | IllegalStateException e) {
        problem = e.getMessage();
      }
    }
    if (problem != null) {
      report.add(new StoreProblem(Kind.SCHEMA, null, -1, problem));
    }
    return problem;
  }

  /**
   * The buckets that have keys of any bucket-scoped type, found by skipping from one bucket prefix
   * to the next (one short scan per bucket and type, no value read). Keys that are no record key
   * (unknown version or record type, a tag invalid for its type, too short, an unaligned bucket)
   * are reported as stray and planned for deletion in {@code global}.
   */
  private static TreeSet<TimeBucket> discover(
      KvReader r, VerifyReport.Builder report, WriteBatch global, Map<Action, Long> actions) {
    TreeSet<TimeBucket> found = new TreeSet<>();
    byte v = (byte) Keys.VERSION;
    stray(
        r,
        null,
        new byte[] {v, 0x00},
        null,
        report,
        global,
        actions); // other versions, and 01 alone
    stray(r, new byte[] {(byte) (v + 1)}, null, null, report, global, actions);
    for (int tag = 0; tag < 256; tag++) {
      byte[] from = {v, (byte) tag};
      byte[] to = tag == 255 ? new byte[] {(byte) (v + 1)} : new byte[] {v, (byte) (tag + 1)};
      RecordType type = typeOf(tag >>> 4);
      int code = tag & 0x0F;
      if (type != null && type.bucketScoped() && code >= TimeBucket.MIN_SIZE_CODE) {
        discoverBuckets(r, code, from, to, found, report, global, actions);
      } else if (type == RecordType.METADATA && code == 0) {
        checkMetadata(r, from, to, report, global, actions);
      } else {
        byte[] globalKey = type != null && !type.bucketScoped() && code == 0 ? from : null;
        stray(r, from, to, globalKey, report, global, actions);
      }
    }
    return found;
  }

  private static void discoverBuckets(
      KvReader r,
      int code,
      byte[] from,
      byte[] to,
      TreeSet<TimeBucket> found,
      VerifyReport.Builder report,
      WriteBatch global,
      Map<Action, Long> actions) {
    while (from != null) {
      byte[] key;
      try (KvCursor c = r.scan(from, to)) {
        if (!c.next()) {
          return;
        }
        key = c.key();
      }
      if (key.length < Keys.BUCKET_PREFIX_LENGTH) {
        stray(r, key, Arrays.copyOf(key, key.length + 1), null, report, global, actions);
        from = Arrays.copyOf(key, key.length + 1); // the next key after it
        continue;
      }
      byte[] prefix = Arrays.copyOf(key, Keys.BUCKET_PREFIX_LENGTH);
      int start = Bytes.getIntBe(key, 2);
      try {
        found.add(new TimeBucket(code, start));
      } catch (
          IllegalArgumentException e) { // unaligned start: nothing under this prefix is a record
        stray(r, prefix, KeyRanges.prefixEnd(prefix), null, report, global, actions);
      }
      from = KeyRanges.prefixEnd(prefix);
    }
  }

  /**
   * Checks the Metadata records (one per metric family, key {@code 01 80 <name>}): each must
   * decode; one that does not is reported and planned for deletion (the family's metadata comes
   * again with the next request that carries it).
   */
  private static void checkMetadata(
      KvReader r,
      byte[] from,
      byte[] to,
      VerifyReport.Builder report,
      WriteBatch global,
      Map<Action, Long> actions) {
    try (KvCursor c = r.scan(from, to)) {
      while (c.next()) {
        byte[] key = c.key();
        report.records++;
        try {
          MetadataValue.decode(key, c.value());
        } catch (CorruptRecordException e) {
          report.add(
              new StoreProblem(
                  Kind.UNDECODABLE_RECORD,
                  null,
                  -1,
                  name(RecordType.METADATA) + " record " + hex(key) + ": " + e.getMessage()));
          global.delete(key);
          actions.merge(Action.RECORDS_DELETED, 1L, Long::sum);
        }
      }
    }
  }

  /** Reports every key in {@code [from, to)} but {@code except} as stray, planning its deletion. */
  private static void stray(
      KvReader r,
      byte[] from,
      byte[] to,
      byte[] except,
      VerifyReport.Builder report,
      WriteBatch global,
      Map<Action, Long> actions) {
    try (KvCursor c = r.scan(from, to)) {
      while (c.next()) {
        byte[] key = c.key();
        if (except != null && Arrays.equals(key, except)) {
          continue;
        }
        report.records++;
        String why;
        try {
          Keys.timeBucket(key);
          why = "not a record key";
        } catch (CorruptRecordException e) {
          why = e.getMessage();
        }
        report.add(new StoreProblem(Kind.STRAY_KEY, null, -1, hex(key) + ": " + why));
        global.delete(key);
        actions.merge(Action.STRAY_KEYS_DELETED, 1L, Long::sum);
      }
    }
  }

  private static RecordType typeOf(int id) {
    try {
      return RecordType.fromId(id);
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  /** The record type as docs/format.md names it. */
  static String name(RecordType type) {
    return switch (type) {
      case BUCKET_LIST -> "BucketList";
      case SERIES_DICTIONARY -> "SeriesDictionary";
      case FORWARD_INDEX -> "ForwardIndex";
      case INVERTED_INDEX -> "InvertedIndex";
      case TIME_SERIES -> "TimeSeries";
      case HEAD_LOG -> "HeadLog";
      case SCHEMA -> "Schema";
      case METADATA -> "Metadata";
      case HEAD_CHUNK -> "HeadChunk";
    };
  }

  /** Lower-case hex of a key, abbreviated past 64 bytes. */
  static String hex(byte[] key) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < key.length && i < 64; i++) {
      sb.append(Character.forDigit((key[i] >>> 4) & 0xF, 16))
          .append(Character.forDigit(key[i] & 0xF, 16));
    }
    if (key.length > 64) {
      sb.append("… (").append(key.length).append(" bytes)");
    }
    return sb.toString();
  }
}
