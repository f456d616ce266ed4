package dev.tidemark.tsdb.query;

import com.google.re2j.Pattern;
import com.google.re2j.PatternSyntaxException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A Prometheus label matcher: {@code name op value} with op one of {@code =}, {@code !=}, {@code
 * =~}, {@code !~}. Regexes are fully anchored, as in Prometheus ({@code foo} matches "foo" only). A
 * matcher is evaluated against the label's value, where an absent label has the value "" (so {@code
 * {a=""}} matches series without {@code a}).
 *
 * <p>Immutable and thread-safe. The regex is compiled once, by RE2/J: RE2's syntax (Go's, which
 * Prometheus uses) matched in time linear in the value's length, so no pattern can make a match
 * backtrack for minutes as Java's {@code java.util.regex} does on {@code (.*a){12}b} ({@link
 * Pattern#DOTALL}: Prometheus' {@code .} matches newlines too).
 */
public final class LabelMatcher {

  /** The four matcher operators. */
  public enum Op {
    EQUAL("="),
    NOT_EQUAL("!="),
    REGEX("=~"),
    NOT_REGEX("!~");

    private final String symbol;

    Op(String symbol) {
      this.symbol = symbol;
    }

    public String symbol() {
      return symbol;
    }
  }

  private final String name;
  private final Op op;
  private final String value;
  private final Pattern pattern;

  /** For regexes that are a plain alternation of literals (a|b|c): the literals, else null. */
  private final List<String> literalAlternatives;

  /** For regexes of the form {@code literal.*}: the literal, else null. */
  private final String literalPrefix;

  private LabelMatcher(String name, Op op, String value) {
    this.name = Objects.requireNonNull(name, "name");
    this.op = Objects.requireNonNull(op, "op");
    this.value = Objects.requireNonNull(value, "value");
    if (op == Op.REGEX || op == Op.NOT_REGEX) {
      try {
        this.pattern = Pattern.compile("(?:" + value + ")", Pattern.DOTALL);
      } catch (PatternSyntaxException e) {
        throw new IllegalArgumentException(
            "invalid regex in matcher "
                + name
                + op.symbol
                + "\""
                + value
                + "\": "
                + e.getMessage(), // Go's wording: error parsing regexp: missing closing ): `(`
            e);
      }
      this.literalAlternatives = literalAlternation(value);
      this.literalPrefix = literalAlternatives == null ? literalPrefix(value) : null;
    } else {
      this.pattern = null;
      this.literalAlternatives = null;
      this.literalPrefix = null;
    }
  }

  public static LabelMatcher equal(String name, String value) {
    return new LabelMatcher(name, Op.EQUAL, value);
  }

  public static LabelMatcher notEqual(String name, String value) {
    return new LabelMatcher(name, Op.NOT_EQUAL, value);
  }

  /**
   * @throws IllegalArgumentException if the regex does not compile (the message names it)
   */
  public static LabelMatcher regex(String name, String regex) {
    return new LabelMatcher(name, Op.REGEX, regex);
  }

  /**
   * @throws IllegalArgumentException if the regex does not compile (the message names it)
   */
  public static LabelMatcher notRegex(String name, String regex) {
    return new LabelMatcher(name, Op.NOT_REGEX, regex);
  }

  public static LabelMatcher of(String name, Op op, String value) {
    return new LabelMatcher(name, op, value);
  }

  public String name() {
    return name;
  }

  public Op op() {
    return op;
  }

  public String value() {
    return value;
  }

  /** Whether the matcher accepts this label value ("" for an absent label). */
  public boolean matches(String labelValue) {
    String v = labelValue == null ? "" : labelValue;
    return switch (op) {
      case EQUAL -> v.equals(value);
      case NOT_EQUAL -> !v.equals(value);
      case REGEX -> pattern.matcher(v).matches();
      case NOT_REGEX -> !pattern.matcher(v).matches();
    };
  }

  /** Whether series without the label match. */
  public boolean matchesEmpty() {
    return matches("");
  }

  /**
   * For {@code =~} with a regex that is only literals separated by {@code |}: the literals.
   * Otherwise null.
   */
  public List<String> literalAlternatives() {
    return literalAlternatives;
  }

  /** For {@code =~} with a regex {@code literal.*}: the literal. Otherwise null. */
  public String literalPrefix() {
    return literalPrefix;
  }

  private static boolean isMeta(char c) {
    return "\\^$.|?*+()[]{}".indexOf(c) >= 0;
  }

  private static List<String> literalAlternation(String regex) {
    List<String> out = new ArrayList<>();
    StringBuilder cur = new StringBuilder();
    for (int i = 0; i < regex.length(); i++) {
      char c = regex.charAt(i);
      if (c == '|') {
        out.add(cur.toString());
        cur.setLength(0);
      } else if (c == '\\' && i + 1 < regex.length() && isMeta(regex.charAt(i + 1))) {
        cur.append(regex.charAt(++i));
      } else if (isMeta(c)) {
        return null;
      } else {
        cur.append(c);
      }
    }
    out.add(cur.toString());
    return out;
  }

  private static String literalPrefix(String regex) {
    if (!regex.endsWith(".*") || regex.endsWith("\\.*")) {
      return null;
    }
    List<String> lit = literalAlternation(regex.substring(0, regex.length() - 2));
    return lit != null && lit.size() == 1 ? lit.get(0) : null;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof LabelMatcher m
        && m.name.equals(name)
        && m.op == op
        && m.value.equals(value);
  }

  @Override
  public int hashCode() {
    return Objects.hash(name, op, value);
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder(name).append(op.symbol).append('"');
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c == '"' || c == '\\') {
        sb.append('\\');
      }
      sb.append(c);
    }
    return sb.append('"').toString();
  }
}
