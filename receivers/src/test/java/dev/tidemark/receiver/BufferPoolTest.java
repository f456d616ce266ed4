package dev.tidemark.receiver;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class BufferPoolTest {

  @Test
  void aGivenBackArrayIsLentAgainWhenLargeEnough() {
    BufferPool pool = new BufferPool(2, 1000);
    byte[] a = pool.borrow(100);
    assertThat(a.length).isGreaterThanOrEqualTo(100);
    pool.giveBack(a);
    assertThat(pool.pooled()).isEqualTo(1);
    assertThat(pool.borrow(a.length)).isSameAs(a);
    assertThat(pool.pooled()).isZero();
  }

  @Test
  void anArrayTooSmallForTheRequestIsReplaced() {
    BufferPool pool = new BufferPool(2, 1000);
    byte[] small = pool.borrow(10);
    pool.giveBack(small);
    byte[] larger = pool.borrow(500);
    assertThat(larger).isNotSameAs(small);
    assertThat(larger.length).isBetween(500, 1000);
    assertThat(pool.pooled()).isZero();
  }

  @Test
  void keepsAtMostItsCountAndNothingOverItsSize() {
    BufferPool pool = new BufferPool(2, 1000);
    byte[] huge = pool.borrow(5000);
    assertThat(huge).hasSize(5000);
    pool.giveBack(huge);
    assertThat(pool.pooled()).isZero();
    pool.giveBack(pool.borrow(1));
    pool.giveBack(new byte[10]);
    pool.giveBack(new byte[10]);
    pool.giveBack(null);
    assertThat(pool.pooled()).isEqualTo(2);
  }

  @Test
  void twoBorrowersNeverShareAnArray() {
    BufferPool pool = new BufferPool(4, 1000);
    byte[] a = pool.borrow(100);
    byte[] b = pool.borrow(100);
    assertThat(a).isNotSameAs(b);
    pool.giveBack(a);
    pool.giveBack(b);
    assertThat(pool.borrow(100)).isNotSameAs(pool.borrow(100));
  }
}
