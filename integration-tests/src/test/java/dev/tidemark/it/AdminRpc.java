package dev.tidemark.it;

import dev.tidemark.admin.v1.AdminServiceGrpc;
import dev.tidemark.admin.v1.Label;
import dev.tidemark.admin.v1.LabelMatcher;
import dev.tidemark.admin.v1.ReadSamplesRequest;
import dev.tidemark.admin.v1.Selection;
import dev.tidemark.admin.v1.SeriesSamples;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.stub.MetadataUtils;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * A gRPC client of a server process's admin API, optionally with a bearer token, and the
 * ReadSamples answer gathered into series → samples (raw bits, stale flag).
 */
final class AdminRpc implements AutoCloseable {
  /** One sample as the API returns it. */
  record Sample(long t, long bits, boolean stale) {}

  private final ManagedChannel channel;

  AdminRpc(int port) {
    this.channel = Otlp.channel(port);
  }

  ManagedChannel channel() {
    return channel;
  }

  /** A stub with a 60 s deadline; {@code token} null sends no authorization header. */
  AdminServiceGrpc.AdminServiceBlockingStub stub(String token) {
    AdminServiceGrpc.AdminServiceBlockingStub stub =
        AdminServiceGrpc.newBlockingStub(channel).withDeadlineAfter(60, TimeUnit.SECONDS);
    if (token != null) {
      Metadata md = new Metadata();
      md.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + token);
      stub = stub.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md));
    }
    return stub;
  }

  static LabelMatcher matcher(String name, LabelMatcher.Op op, String value) {
    return LabelMatcher.newBuilder().setName(name).setOp(op).setValue(value).build();
  }

  static Selection all() {
    return Selection.getDefaultInstance();
  }

  /** Every series of the selection with its samples, in the server's order (labels sorted). */
  static Map<Map<String, String>, List<Sample>> read(
      AdminServiceGrpc.AdminServiceBlockingStub stub, Selection sel) {
    Map<Map<String, String>, List<Sample>> out = new LinkedHashMap<>();
    Iterator<SeriesSamples> it =
        stub.readSamples(ReadSamplesRequest.newBuilder().setSelection(sel).build());
    while (it.hasNext()) {
      SeriesSamples s = it.next();
      List<Sample> samples = out.computeIfAbsent(labels(s.getLabelsList()), k -> new ArrayList<>());
      for (dev.tidemark.admin.v1.Sample x : s.getSamplesList()) {
        samples.add(new Sample(x.getTimestampMs(), x.getValueBits(), x.getStale()));
      }
    }
    return out;
  }

  static Map<String, String> labels(List<Label> labels) {
    Map<String, String> m = new TreeMap<>();
    for (Label l : labels) {
      m.put(l.getName(), l.getValue());
    }
    return m;
  }

  @Override
  public void close() throws InterruptedException {
    channel.shutdownNow();
    channel.awaitTermination(5, TimeUnit.SECONDS);
  }
}
