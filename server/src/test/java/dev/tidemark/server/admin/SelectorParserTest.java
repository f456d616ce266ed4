package dev.tidemark.server.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.tidemark.tsdb.query.LabelMatcher;
import org.junit.jupiter.api.Test;

/** The admin's selectors are PromQL's (the grammar itself is tested in the promql module). */
class SelectorParserTest {

  @Test
  void selectorsAreParsedByPromql() {
    assertThat(SelectorParser.parse(" http_requests:rate5m { job = \"a\" , code!=\"200\", } "))
        .containsExactlyInAnyOrder(
            LabelMatcher.equal("__name__", "http_requests:rate5m"),
            LabelMatcher.equal("job", "a"),
            LabelMatcher.notEqual("code", "200"));
    assertThat(SelectorParser.parse("{\"my.metric\", \"service.name\"=`x\\n`}"))
        .containsExactlyInAnyOrder(
            LabelMatcher.equal("__name__", "my.metric"),
            LabelMatcher.equal("service.name", "x\\n"));
    assertThat(SelectorParser.parse("{}")).isEmpty();
  }

  @Test
  void errorsBecomeIllegalArgumentsNamingTheSelectorAndPosition() {
    assertThatThrownBy(() -> SelectorParser.parse("up{job}"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("invalid selector 'up{job}': 1:")
        .hasMessageContaining("parse error");
    assertThatThrownBy(() -> SelectorParser.parse("up{a=~\"(\"}"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("invalid selector");
    assertThatThrownBy(() -> SelectorParser.parse("rate(up[5m])"))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
