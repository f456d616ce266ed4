package dev.tidemark.tsdb.model;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class LabelStringsTest {

  @Test
  void equalStringsComeBackAsTheFirstInstance() {
    String first = new String("iowait-" + 17);
    String second = new String("iowait-" + 17);
    assertThat(second).isNotSameAs(first);
    assertThat(LabelStrings.share(first)).isSameAs(first);
    assertThat(LabelStrings.share(second)).isSameAs(first);
  }

  @Test
  void aStringIsAlwaysReturnedEqualAndOthersOnlyDisplaceIt() {
    // more distinct strings than slots: every answer is equal to what was asked, and a string
    // asked for again right after is shared
    for (int i = 0; i < 4 * LabelStrings.SLOTS; i++) {
      String s = "pod-" + i;
      String shared = LabelStrings.share(s);
      assertThat(shared).isEqualTo(s);
      assertThat(LabelStrings.share(new String(s))).isSameAs(shared);
    }
  }

  @Test
  void longStringsAreNotKept() {
    String longValue = "x".repeat(LabelStrings.MAX_LENGTH + 1);
    String copy = new String(longValue);
    LabelStrings.share(longValue);
    assertThat(LabelStrings.share(copy)).isSameAs(copy);
  }
}
