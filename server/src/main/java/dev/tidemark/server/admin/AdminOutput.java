package dev.tidemark.server.admin;

import dev.tidemark.admin.v1.ApplyRetentionResponse;
import dev.tidemark.admin.v1.CompactResponse;
import dev.tidemark.admin.v1.CreateCheckpointResponse;
import dev.tidemark.admin.v1.DeleteSeriesResponse;
import dev.tidemark.admin.v1.FindSeriesResponse;
import dev.tidemark.admin.v1.FlushResponse;
import dev.tidemark.admin.v1.GetStatusResponse;
import dev.tidemark.admin.v1.LabelNamesResponse;
import dev.tidemark.admin.v1.LabelValuesResponse;
import dev.tidemark.admin.v1.ListBucketsResponse;
import dev.tidemark.admin.v1.SetRetentionResponse;
import java.io.IOException;

/**
 * How {@code tidemark admin} shows an answer: one method per answer, chosen once for the whole
 * command by {@code --json} ({@link TextOutput}: tables and sentences, notes on standard error;
 * {@link JsonOutput}: the answer message as JSON). Commands never look at the format themselves.
 */
interface AdminOutput {
  void status(GetStatusResponse r) throws IOException;

  void buckets(ListBucketsResponse r) throws IOException;

  void labelNames(LabelNamesResponse r) throws IOException;

  void labelValues(LabelValuesResponse r) throws IOException;

  void series(FindSeriesResponse r) throws IOException;

  /** {@code read}'s output, fed the messages as they arrive. */
  SamplesOutput samples() throws IOException;

  void deleted(DeleteSeriesResponse r) throws IOException;

  void flushed(FlushResponse r) throws IOException;

  void compacted(CompactResponse r) throws IOException;

  void checkpointCreated(CreateCheckpointResponse r) throws IOException;

  void retentionSet(SetRetentionResponse r) throws IOException;

  void retentionApplied(ApplyRetentionResponse r) throws IOException;
}
