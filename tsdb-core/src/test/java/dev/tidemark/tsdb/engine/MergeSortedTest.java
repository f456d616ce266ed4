package dev.tidemark.tsdb.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tidemark.tsdb.model.Labels;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** {@link Reads#mergeSorted}: the union of sorted lists, as a sorted set computes it. */
class MergeSortedTest {
  private static final String[] WORDS = {
    "", "a", "A", "ab", "b", "é", "z", "\uD83D\uDE00", "\uFFFD", "node-1", "node-10", "node-2"
  };

  @Test
  void equalsTheSortedSetOfAllValues() {
    SplittableRandom rnd = new SplittableRandom(7);
    for (int round = 0; round < 2_000; round++) {
      List<String[]> lists = new ArrayList<>();
      TreeSet<String> want = new TreeSet<>(Labels.UTF8_ORDER);
      int n = rnd.nextInt(6);
      for (int i = 0; i < n; i++) {
        TreeSet<String> one = new TreeSet<>(Labels.UTF8_ORDER);
        int k = rnd.nextInt(8);
        for (int j = 0; j < k; j++) {
          // new String(...): equal values are not always the same instance
          one.add(new String(WORDS[rnd.nextInt(WORDS.length)]));
        }
        lists.add(one.toArray(new String[0]));
        if (rnd.nextBoolean() && !lists.isEmpty()) {
          lists.add(lists.get(rnd.nextInt(lists.size())).clone()); // the same names again
        }
        want.addAll(one);
      }
      assertThat(Reads.mergeSorted(lists)).as("round %d", round).containsExactlyElementsOf(want);
    }
  }
}
