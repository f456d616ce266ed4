package dev.tidemark.promql.parser;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The function table drives type checking: every function, every argument count it allows. */
class FunctionsTest {

  private static final Set<String> REQUIRED =
      Set.of(
          "abs",
          "absent",
          "absent_over_time",
          "avg_over_time",
          "ceil",
          "changes",
          "clamp",
          "clamp_max",
          "clamp_min",
          "count_over_time",
          "days_in_month",
          "day_of_month",
          "day_of_week",
          "day_of_year",
          "deg",
          "delta",
          "deriv",
          "exp",
          "floor",
          "histogram_quantile",
          "hour",
          "idelta",
          "increase",
          "irate",
          "label_join",
          "label_replace",
          "last_over_time",
          "ln",
          "log10",
          "log2",
          "mad_over_time",
          "max_over_time",
          "min_over_time",
          "minute",
          "month",
          "pi",
          "predict_linear",
          "present_over_time",
          "quantile_over_time",
          "rad",
          "rate",
          "resets",
          "round",
          "scalar",
          "sgn",
          "sort",
          "sort_desc",
          "sort_by_label",
          "sort_by_label_desc",
          "sqrt",
          "stddev_over_time",
          "stdvar_over_time",
          "sum_over_time",
          "time",
          "timestamp",
          "vector",
          "year",
          "acos",
          "acosh",
          "asin",
          "asinh",
          "atan",
          "atanh",
          "cos",
          "cosh",
          "sin",
          "sinh",
          "tan",
          "tanh",
          "double_exponential_smoothing");

  @Test
  void everyPrometheusFunctionIsInTheTable() {
    assertThat(Functions.all().keySet()).containsAll(REQUIRED);
    // 90 entries in Prometheus' functions.go at d15adb9ad7e5.
    assertThat(Functions.all()).hasSize(90).doesNotContainKey("holt_winters");
  }

  private static String sample(ValueType t, boolean labelSelector) {
    return switch (t) {
      case VECTOR -> labelSelector ? "{a=\"b\"}" : "v";
      case MATRIX -> "m[5m]";
      case SCALAR -> "1";
      case STRING -> "\"s\"";
      default -> throw new AssertionError(t);
    };
  }

  @Test
  void everyAllowedArgumentCountTypeChecksAndAnyOtherFails() {
    for (Function f : Functions.all().values()) {
      int max = Math.min(f.maxArgs(), f.minArgs() + 3);
      for (int n = f.minArgs(); n <= max; n++) {
        List<String> args = new ArrayList<>();
        for (int i = 0; i < n; i++) {
          args.add(sample(f.argType(i), f.name().equals("info") && i == 1));
        }
        String q = f.name() + "(" + String.join(", ", args) + ")";
        Expr e = PromqlParser.parseExpr(q);
        assertThat(e.type()).as(q).isEqualTo(f.returnType());
        assertThat(e.toString()).isEqualTo(q);
      }
      if (f.maxArgs() != Integer.MAX_VALUE) {
        List<String> tooMany = new ArrayList<>();
        for (int i = 0; i <= f.maxArgs(); i++) {
          tooMany.add(f.argTypes().isEmpty() ? "1" : sample(f.argType(i), false));
        }
        assertThatThrownBy(
                () -> PromqlParser.parseExpr(f.name() + "(" + String.join(", ", tooMany) + ")"))
            .as(f.name())
            .isInstanceOf(ParseException.class)
            .hasMessageContaining("argument(s) in call to \"" + f.name() + "\"");
      }
      if (f.minArgs() > 0) {
        ValueType first = f.argType(0);
        ValueType wrong = first == ValueType.STRING ? ValueType.SCALAR : ValueType.STRING;
        List<String> args = new ArrayList<>();
        args.add(sample(wrong, false));
        for (int i = 1; i < f.minArgs(); i++) {
          args.add(sample(f.argType(i), f.name().equals("info") && i == 1));
        }
        assertThatThrownBy(
                () -> PromqlParser.parseExpr(f.name() + "(" + String.join(", ", args) + ")"))
            .as(f.name())
            .hasMessageContaining(
                "expected type "
                    + first.documentedName()
                    + " in call to function \""
                    + f.name()
                    + "\"");
      }
    }
  }

  @Test
  void aggregationParameterTypes() {
    for (AggregateOp op : AggregateOp.values()) {
      String q =
          op.keyword() + "(" + (op.hasParam() ? sample(op.paramType(), false) + ", " : "") + "v)";
      assertThat(PromqlParser.parseExpr(q).toString()).isEqualTo(q);
    }
    assertThat(AggregateOp.COUNT_VALUES.paramType()).isEqualTo(ValueType.STRING);
    assertThat(AggregateOp.QUANTILE.paramType()).isEqualTo(ValueType.SCALAR);
    assertThat(AggregateOp.SUM.hasParam()).isFalse();
  }
}
