package dev.tidemark.translator;

/**
 * The 128-bit XXH3 hash of a stream's full identity: resource attributes, scope (name, version,
 * schema URL, attributes), metric name, unit, type, monotonicity, temporality and data-point
 * attributes, each attribute list in key order (so attribute order in the request does not
 * matter). Like the engine's series fingerprint, the hash stands for the identity: a collision
 * (probability ~2^-128 per pair) would merge two streams.
 */
record StreamKey(long hi, long lo) {}
