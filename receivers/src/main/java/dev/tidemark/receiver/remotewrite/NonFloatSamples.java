package dev.tidemark.receiver.remotewrite;

import dev.tidemark.translator.wire.WireReader;
import dev.tidemark.tsdb.append.SampleBatch;
import dev.tidemark.tsdb.model.Labels;
import dev.tidemark.tsdb.model.MetricMetadata;

/**
 * What a remote-write series carries besides float samples, and what becomes of it: native
 * histograms are decoded ({@link WriteHistogramDecoder}) and added to the batch as histogram
 * samples, one point each (issue #25); one Prometheus would refuse is refused by itself, listed
 * with the model's words and counted, and the rest of the request is written. Exemplars are dropped
 * silently, as Prometheus does when exemplar storage is off (the query API serves none; {@link
 * WriteDecoder} counts them per series). Stateless.
 */
final class NonFloatSamples {
  private NonFloatSamples() {}

  /**
   * Adds series {@code s}'s native histograms to {@code batch}, one point each, noting the series
   * of each point in {@code seriesOf}; refuses those that do not decode or validate.
   *
   * @param k the series, valid
   * @return the number of histograms refused
   */
  static int addHistograms(
      WriteDecoder d,
      int s,
      KnownSeries k,
      Labels labels,
      MetricMetadata meta,
      boolean v2,
      SampleBatch batch,
      int[] seriesOf,
      Refusals refusals) {
    int refused = 0;
    for (int h = d.histogramFirst[s]; h < d.histogramFirst[s] + d.histograms[s]; h++) {
      WriteHistogramDecoder.Decoded decoded;
      try {
        decoded = WriteHistogramDecoder.decode(d.src, d.histogramFrom[h], d.histogramTo[h], v2);
      } catch (IllegalArgumentException | WireReader.Malformed e) { // InvalidHistogramException too
        refusals.add(
            Refusals.Reason.INVALID,
            "invalid histogram: " + e.getMessage() + " for series " + k.text(),
            1);
        refused++;
        continue;
      }
      seriesOf[batch.size()] = s;
      batch.addHistogram(labels, meta, decoded.timestampMillis(), decoded.histogram());
      batch.endPoint();
    }
    return refused;
  }

  /** 2.0: a series must hold at least one sample or histogram (exemplars alone do not count). */
  static boolean emptyV2(WriteDecoder d, int s) {
    return d.sampleEnd[s] == d.sampleStart[s] && d.histograms[s] == 0;
  }
}
