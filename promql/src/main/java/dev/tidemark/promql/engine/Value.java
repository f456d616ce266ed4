package dev.tidemark.promql.engine;

import dev.tidemark.tsdb.model.Labels;
import java.util.List;

/** A query result, as Prometheus' {@code parser.Value}: scalar, string, vector or matrix. */
public sealed interface Value permits Value.Scalar, Value.StringValue, Value.Vector, Value.Matrix {

  /**
   * The Prometheus {@code resultType}: {@code scalar}, {@code string}, {@code vector}, {@code
   * matrix}.
   */
  String resultType();

  /** A number at a time. */
  record Scalar(long timestampMillis, double value) implements Value {
    @Override
    public String resultType() {
      return "scalar";
    }
  }

  /** A string at a time. */
  record StringValue(long timestampMillis, String value) implements Value {
    @Override
    public String resultType() {
      return "string";
    }
  }

  /** One sample of an instant vector. */
  record Sample(Labels labels, long timestampMillis, double value) {}

  /** An instant vector; order matters only after {@code sort*}, {@code topk}, {@code bottomk}. */
  record Vector(List<Sample> samples) implements Value {
    public Vector {
      samples = List.copyOf(samples);
    }

    @Override
    public String resultType() {
      return "vector";
    }
  }

  /** One series of a matrix: timestamps and values, parallel and ascending in time. */
  record Series(Labels labels, long[] timestamps, double[] values) {
    public int size() {
      return timestamps.length;
    }
  }

  /** A range vector or the result of a range query: series sorted by labels. */
  record Matrix(List<Series> series) implements Value {
    public Matrix {
      series = List.copyOf(series);
    }

    @Override
    public String resultType() {
      return "matrix";
    }
  }
}
