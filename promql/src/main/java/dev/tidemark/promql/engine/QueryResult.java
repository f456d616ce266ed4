package dev.tidemark.promql.engine;

/** The value of a query and the annotations (warnings, infos) raised while computing it. */
public record QueryResult(Value value, Annotations annotations) {}
