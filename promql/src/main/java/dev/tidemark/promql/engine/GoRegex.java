package dev.tidemark.promql.engine;

import com.google.re2j.Matcher;
import com.google.re2j.Pattern;

/**
 * The bits of Go's {@code regexp} that label_replace needs. Patterns are RE2/J's ({@code
 * com.google.re2j}): RE2's syntax, Go's, named groups {@code (?P<name>...)} included, matched in
 * time linear in the input, so no pattern backtracks exponentially as {@code java.util.regex} does
 * on {@code (a|aa)*b}.
 */
final class GoRegex {
  private GoRegex() {}

  /**
   * Go's {@code regexp.Compile("^(?s:" + re + ")$")}, as Prometheus' {@code label_replace} anchors
   * its regex ({@code .} matches newlines too).
   *
   * @throws com.google.re2j.PatternSyntaxException if {@code re} is not RE2 syntax
   */
  static Pattern compileAnchored(String re) {
    return Pattern.compile("^(?s:" + re + ")$");
  }

  /**
   * Go's {@code Regexp.ExpandString}: {@code $1}, {@code ${1}}, {@code $name}, {@code ${name}},
   * {@code $$}.
   */
  static String expand(String template, Matcher m) {
    StringBuilder sb = new StringBuilder();
    int i = 0;
    while (i < template.length()) {
      char c = template.charAt(i);
      if (c != '$' || i + 1 >= template.length()) {
        sb.append(c);
        i++;
        continue;
      }
      char d = template.charAt(i + 1);
      if (d == '$') {
        sb.append('$');
        i += 2;
        continue;
      }
      String name;
      int next;
      if (d == '{') {
        int close = template.indexOf('}', i + 2);
        if (close < 0) {
          sb.append(c);
          i++;
          continue;
        }
        name = template.substring(i + 2, close);
        next = close + 1;
        if (name.isEmpty()
            || !name.chars().allMatch(ch -> Character.isLetterOrDigit(ch) || ch == '_')) {
          sb.append(c);
          i++;
          continue;
        }
      } else {
        int j = i + 1;
        while (j < template.length()
            && (Character.isLetterOrDigit(template.charAt(j)) || template.charAt(j) == '_')) {
          j++;
        }
        if (j == i + 1) {
          sb.append(c);
          i++;
          continue;
        }
        name = template.substring(i + 1, j);
        next = j;
      }
      sb.append(group(m, name));
      i = next;
    }
    return sb.toString();
  }

  private static String group(Matcher m, String name) {
    String g = null;
    if (name.chars().allMatch(Character::isDigit)) {
      try {
        int k = Integer.parseInt(name);
        if (k <= m.groupCount()) {
          g = m.group(k);
        }
      } catch (NumberFormatException e) {
        g = null;
      }
    } else {
      try {
        g = m.group(name);
      } catch (IllegalArgumentException e) {
        g = null;
      }
    }
    return g == null ? "" : g;
  }
}
