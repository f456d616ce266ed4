package dev.tidemark.promql.parser;

/** The type of value a PromQL expression evaluates to, as Prometheus' {@code parser.ValueType}. */
public enum ValueType {
  /** No value (an argument list); never the type of an {@link Expr}. */
  NONE("none", "none"),
  SCALAR("scalar", "scalar"),
  /** An instant vector. */
  VECTOR("vector", "instant vector"),
  /** A range vector. */
  MATRIX("matrix", "range vector"),
  STRING("string", "string");

  private final String promName;
  private final String documentedName;

  ValueType(String promName, String documentedName) {
    this.promName = promName;
    this.documentedName = documentedName;
  }

  /** Prometheus' short name ({@code vector}, {@code matrix}), used in some error messages. */
  public String promName() {
    return promName;
  }

  /** The name the documentation uses ({@code instant vector}, {@code range vector}). */
  public String documentedName() {
    return documentedName;
  }
}
