package dev.tidemark.server.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** PromQL's "at least one non-empty matcher" rule, on parsed selectors. */
class SelectorRuleTest {

  @Test
  void selectorsWhoseEveryMatcherMatchesTheEmptyStringAreRefused() {
    for (String selector :
        new String[] {
          "{}",
          "{case=~\".*\"}",
          "{nosuch=\"\"}",
          "{job!=\"api\"}",
          "{job!~\"a.+\"}",
          "{job=~\"a|\"}",
          "{a=\"\", b=~\".*\", c!=\"x\"}",
          "{__name__=~\".*\"}"
        }) {
      assertThat(SelectorRule.hasNonEmptyMatcher(SelectorParser.parse(selector)))
          .as(selector)
          .isFalse();
      assertThatThrownBy(() -> SelectorRule.check(SelectorParser.parse(selector)))
          .as(selector)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith("vector selector must contain at least one non-empty matcher")
          .hasMessageContaining("every series");
    }
    assertThatThrownBy(() -> SelectorRule.check(SelectorParser.parse("{case=~\".*\"}")))
        .hasMessageContaining("{case=~\".*\"} matches the empty string");
  }

  @Test
  void oneMatcherThatRejectsTheEmptyStringIsEnough() {
    for (String selector :
        new String[] {
          "up",
          "{job=\"api\"}",
          "{__name__=~\".+\"}",
          "{job=~\"a.*\"}",
          "{job!=\"\"}",
          "{job!~\"\"}",
          "{case=~\".*\", job=\"api\"}",
          "up{nosuch=\"\"}"
        }) {
      assertThat(SelectorRule.hasNonEmptyMatcher(SelectorParser.parse(selector)))
          .as(selector)
          .isTrue();
      assertThatCode(() -> SelectorRule.check(SelectorParser.parse(selector)))
          .as(selector)
          .doesNotThrowAnyException();
    }
  }
}
