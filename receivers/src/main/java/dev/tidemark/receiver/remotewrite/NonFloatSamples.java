package dev.tidemark.receiver.remotewrite;

/**
 * What a remote-write series carries besides float samples, and what becomes of it: native
 * histograms are refused (Tidemark stores none; the refusal is listed and counted, the float
 * samples beside them are written) and exemplars are dropped silently, as Prometheus does when
 * exemplar storage is off (the query API serves none; {@link WriteDecoder} counts them per series).
 * When the engine stores either, this is where they are handed over. Stateless.
 */
final class NonFloatSamples {
  private NonFloatSamples() {}

  /**
   * Refuses series {@code s}'s native histograms, if it has any.
   *
   * @param k the series, valid
   */
  static void refuseHistograms(WriteDecoder d, int s, KnownSeries k, Refusals refusals) {
    int histograms = d.histograms[s];
    if (histograms > 0) {
      refusals.add(
          Refusals.Reason.NATIVE_HISTOGRAM,
          "native histograms are not supported: " + histograms + " dropped for series " + k.text(),
          histograms);
    }
  }

  /** 2.0: a series must hold at least one sample or histogram (exemplars alone do not count). */
  static boolean emptyV2(WriteDecoder d, int s) {
    return d.sampleEnd[s] == d.sampleStart[s] && d.histograms[s] == 0;
  }
}
