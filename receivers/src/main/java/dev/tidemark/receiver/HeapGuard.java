package dev.tidemark.receiver;

import com.sun.management.GarbageCollectionNotificationInfo;
import java.lang.System.Logger.Level;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BooleanSupplier;
import javax.management.ListenerNotFoundException;
import javax.management.Notification;
import javax.management.NotificationEmitter;
import javax.management.NotificationListener;
import javax.management.openmbean.CompositeData;

/**
 * Back-pressure from the Java heap itself: after every garbage collection, the heap still in use is
 * compared with the maximum heap, and while it is above {@code threshold} of it the receivers
 * refuse new requests ({@code UNAVAILABLE} / 503 with a retry delay, through {@link InFlightBytes})
 * instead of running into an out-of-memory error. The engine's head budget counts what it can
 * estimate (samples and a fixed cost per series); this guard covers what it cannot (labels, caches,
 * queries in progress, garbage the collector has not reached yet).
 *
 * <p>Reads only what the last collection left behind, so the check per request is one volatile
 * read. Thread-safe.
 */
public final class HeapGuard implements BooleanSupplier, AutoCloseable {
  private static final System.Logger LOG = System.getLogger(HeapGuard.class.getName());

  /** The default share of the maximum heap above which writes are refused: 90 %. */
  public static final double DEFAULT_THRESHOLD = 0.9;

  private final double threshold;
  private final long maxHeap;
  private final Set<String> heapPools = new HashSet<>();
  private final List<Runnable> unregister = new ArrayList<>();
  private volatile boolean pressed;
  private volatile double lastShare;

  /** A guard that nothing feeds but {@link #afterGc} (tests). */
  HeapGuard(double threshold, long maxHeap) {
    if (!(threshold > 0 && threshold <= 1)) {
      throw new IllegalArgumentException("threshold must be in (0, 1], was " + threshold);
    }
    this.threshold = threshold;
    this.maxHeap = maxHeap;
  }

  /**
   * A guard fed by this JVM's collectors; none when the heap has no maximum (then it never
   * refuses).
   */
  public static HeapGuard install(double threshold) {
    long max = Runtime.getRuntime().maxMemory();
    HeapGuard g = new HeapGuard(threshold, max == Long.MAX_VALUE ? 0 : max);
    if (g.maxHeap > 0) {
      g.listen();
    }
    return g;
  }

  private void listen() {
    ManagementFactory.getMemoryPoolMXBeans().stream()
        .filter(p -> p.getType() == MemoryType.HEAP)
        .forEach(p -> heapPools.add(p.getName()));
    NotificationListener listener = (n, handback) -> onNotification(n);
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      if (gc instanceof NotificationEmitter emitter) {
        emitter.addNotificationListener(listener, null, null);
        unregister.add(
            () -> {
              try {
                emitter.removeNotificationListener(listener);
              } catch (ListenerNotFoundException e) {
                // already gone
              }
            });
      }
    }
  }

  private void onNotification(Notification n) {
    if (!GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION.equals(n.getType())) {
      return;
    }
    GarbageCollectionNotificationInfo info =
        GarbageCollectionNotificationInfo.from((CompositeData) n.getUserData());
    long used = 0;
    for (Map.Entry<String, MemoryUsage> e : info.getGcInfo().getMemoryUsageAfterGc().entrySet()) {
      if (heapPools.contains(e.getKey())) {
        used += e.getValue().getUsed();
      }
    }
    afterGc(used);
  }

  /** Takes the heap in use after a collection. */
  void afterGc(long usedAfterGc) {
    if (maxHeap <= 0) {
      return;
    }
    double share = (double) usedAfterGc / maxHeap;
    lastShare = share;
    boolean now = share > threshold;
    if (now != pressed) {
      pressed = now;
      if (now) {
        LOG.log(
            Level.WARNING,
            "heap {0}% full after garbage collection (max {1} MiB): refusing writes with a retry"
                + " delay until it is below {2}%",
            Math.round(share * 100),
            maxHeap >> 20,
            Math.round(threshold * 100));
      } else {
        LOG.log(
            Level.INFO,
            "heap {0}% full after garbage collection: writes accepted again",
            Math.round(share * 100));
      }
    }
  }

  /** Whether writes are refused now. */
  @Override
  public boolean getAsBoolean() {
    return pressed;
  }

  /**
   * Why writes are refused now, for answers and {@code /-/ready}: {@code "the server's memory is
   * nearly full (heap 93% after GC)"}; null while they are not. One volatile read when not.
   */
  public String refusal() {
    if (!pressed) {
      return null;
    }
    return "the server's memory is nearly full (heap "
        + Math.round(lastShare * 100)
        + "% after GC)";
  }

  /** The share of the maximum heap in use after the last collection (0 before the first). */
  public double lastShare() {
    return lastShare;
  }

  @Override
  public void close() {
    unregister.forEach(Runnable::run);
    unregister.clear();
  }
}
