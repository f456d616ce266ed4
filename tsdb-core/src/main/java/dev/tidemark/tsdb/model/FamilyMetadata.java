package dev.tidemark.tsdb.model;

import java.util.Objects;

/**
 * Metadata of a Prometheus metric family as the metadata API serves it.
 *
 * @param family the family name ({@code http_server_request_duration_seconds}); series may add
 *     {@code _bucket}/{@code _sum}/{@code _count}
 * @param type the Prometheus TYPE
 * @param unit the UNIT (unit words without type suffix, {@code ""} if none)
 * @param help the HELP text (the OTLP description)
 */
public record FamilyMetadata(String family, PromType type, String unit, String help) {
  public FamilyMetadata {
    Objects.requireNonNull(family, "family");
    Objects.requireNonNull(type, "type");
    unit = unit == null ? "" : unit;
    help = help == null ? "" : help;
  }
}
