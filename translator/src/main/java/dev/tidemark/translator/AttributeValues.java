package dev.tidemark.translator;

import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.common.v1.KeyValueList;
import java.util.Base64;
import java.util.Map;
import java.util.TreeMap;

/**
 * OTLP {@code AnyValue} as a label value, as Go pdata's {@code Value.AsString} renders it (contract
 * §2.3): strings as-is, booleans {@code true}/{@code false}, integers in decimal, doubles
 * ECMAScript-style, bytes base64, arrays and maps compact JSON (map keys sorted, HTML characters
 * escaped as Go's encoder does, NaN/±Inf as JSON strings), nothing as {@code ""}.
 */
final class AttributeValues {
  private AttributeValues() {}

  static String toLabelValue(AnyValue v) {
    switch (v.getValueCase()) {
      case STRING_VALUE:
        return v.getStringValue();
      case BOOL_VALUE:
        return v.getBoolValue() ? "true" : "false";
      case INT_VALUE:
        return Long.toString(v.getIntValue());
      case DOUBLE_VALUE:
        return FloatFormat.es6(v.getDoubleValue());
      case BYTES_VALUE:
        return Base64.getEncoder().encodeToString(v.getBytesValue().toByteArray());
      case ARRAY_VALUE:
      case KVLIST_VALUE:
        StringBuilder sb = new StringBuilder();
        appendJson(sb, v);
        return sb.toString();
      default:
        return "";
    }
  }

  private static void appendJson(StringBuilder sb, AnyValue v) {
    switch (v.getValueCase()) {
      case STRING_VALUE -> appendJsonString(sb, v.getStringValue());
      case BOOL_VALUE -> sb.append(v.getBoolValue());
      case INT_VALUE -> sb.append(v.getIntValue());
      case DOUBLE_VALUE -> {
        double d = v.getDoubleValue();
        if (Double.isNaN(d) || Double.isInfinite(d)) {
          appendJsonString(sb, FloatFormat.es6(d));
        } else {
          sb.append(FloatFormat.es6(d));
        }
      }
      case BYTES_VALUE ->
          appendJsonString(sb, Base64.getEncoder().encodeToString(v.getBytesValue().toByteArray()));
      case ARRAY_VALUE -> {
        sb.append('[');
        for (int i = 0; i < v.getArrayValue().getValuesCount(); i++) {
          if (i > 0) {
            sb.append(',');
          }
          appendJson(sb, v.getArrayValue().getValues(i));
        }
        sb.append(']');
      }
      case KVLIST_VALUE -> {
        KeyValueList list = v.getKvlistValue();
        Map<String, AnyValue> sorted = new TreeMap<>();
        for (KeyValue kv : list.getValuesList()) {
          sorted.put(kv.getKey(), kv.getValue());
        }
        sb.append('{');
        boolean first = true;
        for (Map.Entry<String, AnyValue> e : sorted.entrySet()) {
          if (!first) {
            sb.append(',');
          }
          first = false;
          appendJsonString(sb, e.getKey());
          sb.append(':');
          appendJson(sb, e.getValue());
        }
        sb.append('}');
      }
      default -> sb.append("null");
    }
  }

  private static void appendJsonString(StringBuilder sb, String s) {
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\r' -> sb.append("\\r");
        case '\t' -> sb.append("\\t");
        case '<', '>', '&', '\u2028', '\u2029' -> sb.append(String.format("\\u%04x", (int) c));
        default -> {
          if (c < 0x20) {
            sb.append(String.format("\\u%04x", (int) c));
          } else {
            sb.append(c);
          }
        }
      }
    }
    sb.append('"');
  }
}
