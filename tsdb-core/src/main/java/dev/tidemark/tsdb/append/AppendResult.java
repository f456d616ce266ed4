package dev.tidemark.tsdb.append;

import java.util.Arrays;

/**
 * The outcome of {@link Appender#append}: per point, accepted or the reason it was rejected; per
 * sample, the sample's own reason if it had one. A point is rejected with the reason of its first
 * failing sample; its other samples are not written either.
 */
public final class AppendResult {
  private final RejectReason[] pointReasons;
  private final RejectReason[] sampleReasons;
  private final String[] pointDetails;
  private final int rejectedPoints;

  /**
   * @param pointReasons one entry per point, null = accepted (the array is taken, not copied)
   * @param sampleReasons one entry per sample, null = the sample itself was fine
   */
  public AppendResult(RejectReason[] pointReasons, RejectReason[] sampleReasons) {
    this(pointReasons, sampleReasons, null);
  }

  /**
   * @param pointDetails null, or one entry per point: a message saying more than the reason (taken,
   *     not copied)
   */
  public AppendResult(
      RejectReason[] pointReasons, RejectReason[] sampleReasons, String[] pointDetails) {
    this.pointReasons = pointReasons;
    this.sampleReasons = sampleReasons;
    this.pointDetails = pointDetails;
    int r = 0;
    for (RejectReason reason : pointReasons) {
      if (reason != null) {
        r++;
      }
    }
    this.rejectedPoints = r;
  }

  public int pointCount() {
    return pointReasons.length;
  }

  public int rejectedPoints() {
    return rejectedPoints;
  }

  public int acceptedPoints() {
    return pointReasons.length - rejectedPoints;
  }

  /** Null if point {@code p} was written, else why not. */
  public RejectReason pointReason(int p) {
    return pointReasons[p];
  }

  /**
   * What more there is to say about point {@code p}'s rejection (for {@link
   * RejectReason#LIMIT_EXCEEDED}: the field and the limit), or null.
   */
  public String pointDetail(int p) {
    return pointDetails == null ? null : pointDetails[p];
  }

  /** Null if sample {@code i} itself was acceptable (it is written only if its point is). */
  public RejectReason sampleReason(int i) {
    return sampleReasons[i];
  }

  /** Number of points rejected for {@code reason}. */
  public int rejectedPoints(RejectReason reason) {
    int n = 0;
    for (RejectReason r : pointReasons) {
      if (r == reason) {
        n++;
      }
    }
    return n;
  }

  @Override
  public String toString() {
    return "AppendResult{points="
        + pointReasons.length
        + ", rejected="
        + rejectedPoints
        + ", reasons="
        + Arrays.toString(pointReasons)
        + "}";
  }
}
