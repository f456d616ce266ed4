package dev.tidemark.translator;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.tidemark.translator.OtlpWire.Reader;
import io.opentelemetry.proto.common.v1.InstrumentationScope;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.metrics.v1.Metric;
import io.opentelemetry.proto.metrics.v1.ScopeMetrics;
import io.opentelemetry.proto.resource.v1.Resource;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The in-place path of {@link Translator#translate(byte[], int, int)}: walks an {@code
 * ExportMetricsServiceRequest} in its wire bytes (already checked by {@link OtlpWire#isValid}) and
 * feeds the same rules the tree path uses, without building the message tree.
 *
 * <ul>
 *   <li>Resources and scopes (a handful per request) are parsed as small protobuf messages and go
 *       through the tree path's code as they are; a metric's header (name, description, unit,
 *       metadata, temporality, monotonicity) becomes a {@link Metric} without data points.
 *   <li>Each data point's scalar fields are decoded into the reused {@link Pt} ({@link WirePoints},
 *       one decoder per kind); its attributes stay bytes. The stream is found by one lookup:
 *       XXH3-64 over the attribute fields' bytes, mixed with the metric's 128-bit identity, keys a
 *       cache of {@link WireStream}s; a hit is accepted only if the metric identity and all
 *       attribute bytes are equal to the stored ones, so a hash collision never merges two streams
 *       (it only costs the slow path).
 *   <li>A miss decodes the point's attributes into {@link KeyValue}s and asks the tree path's
 *       {@link SeriesResolver#lookup}, which keys streams by their canonical (order-independent)
 *       identity and builds the labels; the result is remembered under the bytes. Two byte forms of
 *       one stream (attributes in another order) thus share one stream, series and delta state.
 * </ul>
 *
 * Protobuf semantics the walk reproduces: the last occurrence of a scalar wins, repeated
 * occurrences of a message field merge (repeated fields concatenate), for a {@code oneof} only the
 * last member seen counts (and occurrences of it before another member are dropped), unknown fields
 * are skipped, repeated scalars come packed or not. One per thread (in the request state).
 */
final class InPlace {

  /**
   * A stream the in-place path has seen: its key in the {@link WireStreamCache} (the hash of its
   * metric and attribute bytes), its exact attribute bytes and the tree path's answer (the entry,
   * which holds the stream's key).
   */
  static final class WireStream {
    final long keyHi;
    final long keyLo;
    final long metricHi;
    final long metricLo;
    final byte[] attributes;
    final SeriesEntry entry;

    /** Its place in the cache's array, set when it is put ({@link WireStreamCache#put}). */
    int position;

    WireStream(
        long keyHi,
        long keyLo,
        long metricHi,
        long metricLo,
        byte[] attributes,
        SeriesEntry entry) {
      this.keyHi = keyHi;
      this.keyLo = keyLo;
      this.metricHi = metricHi;
      this.metricLo = metricLo;
      this.attributes = attributes;
      this.entry = entry;
    }
  }

  private final Translator t;
  private final Reader r = new Reader(null, 0, 0);

  /** The validation walk of the current request (its attribute-run hashes are reused). */
  final Reader checked = new Reader(null, 0, 0);

  private byte[] keyScratch = new byte[512];
  // Field ranges per nesting level: [start0, end0, start1, end1, ...].
  private int[] scopes = new int[16];
  private int[] metrics = new int[64];
  private int[] data = new int[8];

  InPlace(Translator t) {
    this.t = t;
  }

  // ---------------------------------------------------------------- the walk

  void request(RequestState rs, byte[] buf, int off, int end) {
    checked.rewindRuns();
    Reader r = this.r;
    r.reset(buf, off);
    while (r.pos < end) {
      int tag = r.tag(end);
      if (tag == OtlpWire.tag(1, OtlpWire.WT_LEN)) {
        int n = r.length(end);
        int s = r.pos;
        resourceMetrics(rs, buf, s, s + n);
        r.pos = s + n;
      } else {
        r.skip(tag, end, 0);
      }
    }
  }

  private void resourceMetrics(RequestState rs, byte[] buf, int start, int end) {
    Reader r = this.r;
    r.pos = start;
    Resource.Builder resource = null;
    int ns = 0;
    while (r.pos < end) {
      int tag = r.tag(end);
      if (tag == OtlpWire.tag(1, OtlpWire.WT_LEN)) {
        int n = r.length(end);
        if (resource == null) {
          resource = Resource.newBuilder();
        }
        merge(resource, buf, r.pos, n);
        r.pos += n;
      } else if (tag == OtlpWire.tag(2, OtlpWire.WT_LEN)) {
        int n = r.length(end);
        scopes = add(scopes, ns, r.pos, r.pos + n);
        ns += 2;
        r.pos += n;
      } else {
        r.skip(tag, end, 0);
      }
    }
    ResourceContexts.ResourceContext rc =
        t.resources.begin(rs, resource == null ? Resource.getDefaultInstance() : resource.build());
    int[] sc = Arrays.copyOf(scopes, ns); // scopeMetrics reuses the level below only
    for (int i = 0; i < ns; i += 2) {
      scopeMetrics(rs, rc, buf, sc[i], sc[i + 1]);
    }
    t.resources.end(rs, rc);
  }

  private void scopeMetrics(
      RequestState rs, ResourceContexts.ResourceContext rc, byte[] buf, int start, int end) {
    Reader r = this.r;
    r.pos = start;
    InstrumentationScope.Builder scope = null;
    String schemaUrl = "";
    int nm = 0;
    while (r.pos < end) {
      int tag = r.tag(end);
      if (tag == OtlpWire.tag(1, OtlpWire.WT_LEN)) {
        int n = r.length(end);
        if (scope == null) {
          scope = InstrumentationScope.newBuilder();
        }
        merge(scope, buf, r.pos, n);
        r.pos += n;
      } else if (tag == OtlpWire.tag(2, OtlpWire.WT_LEN)) {
        int n = r.length(end);
        metrics = add(metrics, nm, r.pos, r.pos + n);
        nm += 2;
        r.pos += n;
      } else if (tag == OtlpWire.tag(3, OtlpWire.WT_LEN)) {
        int n = r.length(end);
        schemaUrl = new String(buf, r.pos, n, StandardCharsets.UTF_8);
        r.pos += n;
      } else {
        r.skip(tag, end, 0);
      }
    }
    ScopeMetrics.Builder header = ScopeMetrics.newBuilder().setSchemaUrl(schemaUrl);
    if (scope != null) {
      header.setScope(scope);
    }
    ResourceContexts.ScopeContext sc = t.resources.scope(rs, header.build(), rc);
    for (int i = 0; i < nm; i += 2) {
      metric(rs, rc, sc, buf, metrics[i], metrics[i + 1]);
    }
  }

  private void metric(
      RequestState rs,
      ResourceContexts.ResourceContext rc,
      ResourceContexts.ScopeContext sc,
      byte[] buf,
      int start,
      int end) {
    Reader r = this.r;
    r.pos = start;
    MetricHeaders.Fields h = rs.metricHeader;
    h.clear();
    List<KeyValue> metadata = null;
    int dataField = 0;
    int nd = 0;
    while (r.pos < end) {
      int tag = r.tag(end);
      switch (tag) {
        case 1 << 3 | OtlpWire.WT_LEN -> {
          h.nameLen = r.length(end);
          h.nameAt = r.pos;
          r.pos += h.nameLen;
        }
        case 2 << 3 | OtlpWire.WT_LEN -> {
          h.descLen = r.length(end);
          h.descAt = r.pos;
          r.pos += h.descLen;
        }
        case 3 << 3 | OtlpWire.WT_LEN -> {
          h.unitLen = r.length(end);
          h.unitAt = r.pos;
          r.pos += h.unitLen;
        }
        case 5 << 3 | OtlpWire.WT_LEN,
            7 << 3 | OtlpWire.WT_LEN,
            9 << 3 | OtlpWire.WT_LEN,
            10 << 3 | OtlpWire.WT_LEN,
            11 << 3 | OtlpWire.WT_LEN -> {
          int n = r.length(end);
          int field = tag >>> 3;
          if (field != dataField) {
            dataField = field; // another oneof member replaces what came before
            nd = 0;
          }
          data = add(data, nd, r.pos, r.pos + n);
          nd += 2;
          r.pos += n;
        }
        case 12 << 3 | OtlpWire.WT_LEN -> {
          int n = r.length(end);
          if (metadata == null) {
            metadata = new ArrayList<>(2);
          }
          metadata.add(parseKeyValue(buf, r.pos, n));
          r.pos += n;
        }
        default -> r.skip(tag, end, 0);
      }
    }
    // The data member's header fields and its number of points.
    h.dataField = dataField;
    int points = 0;
    for (int i = 0; i < nd; i += 2) {
      int e = data[i + 1];
      r.pos = data[i];
      while (r.pos < e) {
        int tag = r.tag(e);
        if (tag == OtlpWire.tag(1, OtlpWire.WT_LEN)) {
          {
            int skipLen = r.length(e);
            r.pos += skipLen;
          }
          points++;
        } else if (tag == OtlpWire.tag(2, OtlpWire.WT_VARINT)
            && dataField != 5
            && dataField != 11) {
          h.temporality = (int) r.varint(e);
        } else if (tag == OtlpWire.tag(3, OtlpWire.WT_VARINT) && dataField == 7) {
          h.monotonic = r.varint(e) != 0;
        } else {
          r.skip(tag, e, 0);
        }
      }
    }
    // The same header bytes give the same message: built once (MetricHeaders), unless it carries
    // metadata.
    MetricHeaders.Key key = rs.metricHeaderKey;
    Metric header = null;
    if (metadata == null) {
      key.set(buf, h);
      header = t.metricHeaders().get(key);
    }
    if (header == null) {
      header = h.build(buf, metadata);
      if (metadata == null) {
        t.metricHeaders().put(key, header);
      }
    }
    MetricCtx mc = t.beginMetric(rs, rc, sc, header, points);
    if (mc == null) {
      return;
    }
    boolean counter = mc.meta.monotonic();
    Pt pt = rs.pt;
    int[] ranges = Arrays.copyOf(data, nd);
    for (int i = 0; i < nd; i += 2) {
      int e = ranges[i + 1];
      int pos = ranges[i];
      while (pos < e) {
        r.pos = pos;
        int tag = r.tag(e);
        if (tag != OtlpWire.tag(1, OtlpWire.WT_LEN)) {
          r.skip(tag, e, 0);
          pos = r.pos;
          continue;
        }
        int n = r.length(e);
        int ps = r.pos;
        pos = ps + n;
        pt.clearForWire(buf);
        switch (dataField) {
          case 5, 7 -> {
            WirePoints.number(r, pt, ps, pos);
            t.numbers.point(rs, mc, pt, dataField == 7 && counter);
          }
          case 9 -> {
            WirePoints.histogram(r, pt, ps, pos);
            t.histograms.point(rs, mc, pt);
          }
          case 10 -> {
            WirePoints.exponential(r, pt, ps, pos);
            t.exponentialHistograms.point(rs, mc, pt);
          }
          case 11 -> {
            WirePoints.summary(r, pt, ps, pos);
            t.summaries.point(rs, mc, pt);
          }
          default -> throw new AssertionError(dataField);
        }
      }
    }
  }

  // ---------------------------------------------------------------- stream lookup

  /** The point's series entry; sets {@code rs.key}. See the class comment. */
  SeriesEntry entry(RequestState rs, MetricCtx mc, Pt p) {
    byte[] b = p.buf;
    int n = p.na;
    int off = 0;
    int len = 0;
    if (n > 0) {
      boolean contiguous = true;
      for (int i = 1; i < n; i++) {
        if (p.attrStart[i] != p.attrEnd[i - 1]) {
          contiguous = false;
          break;
        }
      }
      if (contiguous) {
        off = p.attrStart[0];
        len = p.attrEnd[n - 1] - off;
      } else {
        // Attribute fields interleaved with others: their bytes in order, as if contiguous.
        for (int i = 0; i < n; i++) {
          len += p.attrEnd[i] - p.attrStart[i];
        }
        if (keyScratch.length < len) {
          keyScratch = new byte[Math.max(len, keyScratch.length * 2)];
        }
        int o = 0;
        for (int i = 0; i < n; i++) {
          int l = p.attrEnd[i] - p.attrStart[i];
          System.arraycopy(b, p.attrStart[i], keyScratch, o, l);
          o += l;
        }
        b = keyScratch;
      }
    }
    long h = b == p.buf ? checked.runHash(off, len) : 0;
    if (h == 0) {
      h = OtlpWire.attributeHash(b, off, len);
    }
    long keyHi = mix(mc.hashHi ^ h);
    long keyLo = mix(mc.hashLo + h * 0x9E3779B97F4A7C15L + len);
    WireStreamCache cache = t.wireStreams();
    // The stream after the last one found is usually this point's (see WireStreamCache).
    WireStream ws = cache.at(rs.nextWireStream);
    if (ws == null || ws.keyLo != keyLo || ws.keyHi != keyHi) {
      ws = cache.get(keyHi, keyLo);
    }
    if (ws != null
        && ws.metricHi == mc.hashHi
        && ws.metricLo == mc.hashLo
        && Arrays.equals(ws.attributes, 0, ws.attributes.length, b, off, off + len)) {
      rs.nextWireStream = ws.position + 1;
      rs.key = ws.entry.key;
      AtomicReferenceArray<byte[]> known = t.knownRuns();
      int slot = (int) h & (known.length() - 1);
      if (known.get(slot) != ws.attributes) {
        known.set(slot, ws.attributes); // the run checks as valid by comparison next time
      }
      return ws.entry;
    }
    // Not seen (or a hash collision, which is left alone): the tree path's lookup on decoded
    // attributes.
    List<KeyValue> attrs = new ArrayList<>(n);
    Reader r = new Reader(p.buf, 0, p.buf.length);
    for (int i = 0; i < n; i++) {
      r.pos = p.attrStart[i];
      r.tag(p.attrEnd[i]);
      int l = r.length(p.attrEnd[i]);
      attrs.add(parseKeyValue(p.buf, r.pos, l));
    }
    SeriesEntry e = t.resolver.lookupForWire(rs, mc, attrs);
    if (ws == null) {
      AtomicReferenceArray<byte[]> known = t.knownRuns();
      int slot = (int) h & (known.length() - 1);
      // One metric's streams on many resources (instances) usually carry the same attribute bytes:
      // they share one copy (never changed) if the known-run table holds it.
      byte[] k = known.get(slot);
      byte[] attributes =
          k != null && Arrays.equals(k, 0, k.length, b, off, off + len)
              ? k
              : Arrays.copyOfRange(b, off, off + len);
      WireStream created = new WireStream(keyHi, keyLo, mc.hashHi, mc.hashLo, attributes, e);
      cache.put(created);
      rs.nextWireStream = created.position + 1;
      // The request these bytes came from was checked whole, so the run is valid wherever it
      // recurs.
      known.set(slot, attributes);
    }
    return e;
  }

  // ---------------------------------------------------------------- counting

  /** Data points in a valid request, counted as the translator counts them. */
  static int countDataPoints(byte[] buf, int off, int len) {
    Reader r = new Reader(buf, off, off + len);
    return count(r, off + len, 0);
  }

  private static int count(Reader r, int end, int level) {
    int total = 0;
    int dataField = 0;
    int points = 0;
    while (r.pos < end) {
      int tag = r.tag(end);
      int field = tag >>> 3;
      boolean len = (tag & 7) == OtlpWire.WT_LEN;
      if (len && level < 3 && ((level == 0 && field == 1) || (level > 0 && field == 2))) {
        int n = r.length(end);
        int e = r.pos + n;
        total += count(r, e, level + 1);
        r.pos = e;
      } else if (len
          && level == 3
          && (field == 5 || field == 7 || field == 9 || field == 10 || field == 11)) {
        int n = r.length(end);
        int e = r.pos + n;
        if (field != dataField) {
          dataField = field;
          points = 0;
        }
        while (r.pos < e) {
          int t2 = r.tag(e);
          if (t2 == OtlpWire.tag(1, OtlpWire.WT_LEN)) {
            {
              int skipLen = r.length(e);
              r.pos += skipLen;
            }
            points++;
          } else {
            r.skip(t2, e, 0);
          }
        }
      } else {
        r.skip(tag, end, 0);
      }
    }
    return total + points;
  }

  // ---------------------------------------------------------------- helpers

  private static long mix(long k) {
    k ^= k >>> 33;
    k *= 0xff51afd7ed558ccdL;
    k ^= k >>> 33;
    k *= 0xc4ceb9fe1a85ec53L;
    k ^= k >>> 33;
    return k;
  }

  private static int[] add(int[] a, int n, int start, int end) {
    if (n + 2 > a.length) {
      a = Arrays.copyOf(a, a.length * 2);
    }
    a[n] = start;
    a[n + 1] = end;
    return a;
  }

  private static KeyValue parseKeyValue(byte[] buf, int off, int len) {
    try {
      return KeyValue.parser().parseFrom(buf, off, len);
    } catch (InvalidProtocolBufferException e) {
      throw new IllegalStateException("bytes checked as valid did not parse", e);
    }
  }

  private static void merge(
      com.google.protobuf.MessageLite.Builder b, byte[] buf, int off, int len) {
    try {
      b.mergeFrom(buf, off, len);
    } catch (InvalidProtocolBufferException e) {
      throw new IllegalStateException("bytes checked as valid did not parse", e);
    }
  }
}
