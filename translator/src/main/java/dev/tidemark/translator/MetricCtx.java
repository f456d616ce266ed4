package dev.tidemark.translator;

import dev.tidemark.translator.ResourceContexts.ResourceContext;
import dev.tidemark.translator.ResourceContexts.ScopeContext;
import dev.tidemark.tsdb.model.MetricMetadata;
import dev.tidemark.tsdb.model.PromType;

/**
 * The metric being translated: its resource and scope, Prometheus family, metadata and 128-bit
 * identity (the seed of its streams' keys). One per thread, in {@link RequestState}, reused.
 */
final class MetricCtx {
  ResourceContext rc;
  ScopeContext sc;
  String family;
  MetricMetadata meta;
  long hashHi;
  long hashLo;
  boolean delta;
  PromType promType;
}
