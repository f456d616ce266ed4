package dev.tidemark.receiver;

import dev.tidemark.tsdb.append.AppendResult;
import dev.tidemark.tsdb.append.Appender;
import dev.tidemark.tsdb.append.RejectReason;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.append.StorageUnavailableException;
import dev.tidemark.tsdb.model.Labels;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * An appender for receiver tests: records the samples of accepted points, rejects points whose
 * metric has a configured reason, throws {@link StorageUnavailableException} on demand, and can
 * hold an append (to keep a request in flight) until released.
 */
public final class TestAppender implements Appender {
  public record Sample(Labels labels, long timestampMillis, double value) {
    public String name() {
      return labels.metricName();
    }
  }

  private final List<Sample> samples = new ArrayList<>();
  private final Map<String, RejectReason> rejectByName = new ConcurrentHashMap<>();
  private volatile boolean unavailable;
  private volatile String holdMetric;
  private volatile CountDownLatch held = new CountDownLatch(1);
  private volatile CountDownLatch release = new CountDownLatch(1);

  /** Points with a sample of metric {@code name} are rejected with {@code reason}. */
  public TestAppender reject(String name, RejectReason reason) {
    rejectByName.put(name, reason);
    return this;
  }

  public void unavailable(boolean v) {
    unavailable = v;
  }

  /**
   * An append carrying metric {@code name} signals {@link #awaitHeld} and waits for {@link
   * #release}.
   */
  public void holdOn(String name) {
    held = new CountDownLatch(1);
    release = new CountDownLatch(1);
    holdMetric = name;
  }

  public boolean awaitHeld() throws InterruptedException {
    return held.await(10, TimeUnit.SECONDS);
  }

  public void release() {
    holdMetric = null;
    release.countDown();
  }

  public synchronized List<Sample> samples() {
    return List.copyOf(samples);
  }

  public synchronized List<Sample> named(String name) {
    return samples.stream().filter(s -> s.name().equals(name)).toList();
  }

  @Override
  public AppendResult append(SampleBatch batch) {
    if (unavailable) {
      throw new StorageUnavailableException("test: storage unavailable");
    }
    String hold = holdMetric;
    if (hold != null) {
      for (int i = 0; i < batch.size(); i++) {
        if (hold.equals(batch.labels(i).metricName())) {
          held.countDown();
          try {
            if (!release.await(30, TimeUnit.SECONDS)) {
              throw new IllegalStateException("test appender never released");
            }
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StorageUnavailableException("interrupted");
          }
          break;
        }
      }
    }
    synchronized (this) {
      RejectReason[] pointReasons = new RejectReason[batch.pointCount()];
      RejectReason[] sampleReasons = new RejectReason[batch.size()];
      for (int i = 0; i < batch.size(); i++) {
        RejectReason r = rejectByName.get(batch.labels(i).metricName());
        if (r != null) {
          sampleReasons[i] = r;
          if (pointReasons[batch.pointOf(i)] == null) {
            pointReasons[batch.pointOf(i)] = r;
          }
        }
      }
      for (int i = 0; i < batch.size(); i++) {
        if (pointReasons[batch.pointOf(i)] == null) {
          samples.add(
              new Sample(
                  batch.labels(i),
                  batch.timestampMillis(i),
                  Double.longBitsToDouble(batch.valueBits(i))));
        }
      }
      return new AppendResult(pointReasons, sampleReasons);
    }
  }
}
