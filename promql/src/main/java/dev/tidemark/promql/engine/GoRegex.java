package dev.tidemark.promql.engine;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The bits of Go's {@code regexp} that label_replace needs: RE2 syntax to Java, and {@code Expand}.
 */
final class GoRegex {
  private GoRegex() {}

  /**
   * RE2 and Java agree on the syntax PromQL users write; named groups {@code (?P<n>...)} differ.
   */
  static String toJava(String re) {
    return re.replace("(?P<", "(?<");
  }

  /**
   * Go's {@code Regexp.ExpandString}: {@code $1}, {@code ${1}}, {@code $name}, {@code ${name}},
   * {@code $$}.
   */
  static String expand(String template, Matcher m, Pattern p) {
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
