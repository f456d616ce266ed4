/**
 * The RocksDB implementation of the tsdb-core KV seam ({@link dev.tidemark.tsdb.kv.KvStore}):
 * {@link dev.tidemark.rocksdb.RocksDbKvStore}, configured by {@link
 * dev.tidemark.rocksdb.RocksDbConfig}. No RocksDB type appears in the public API; cursor and
 * snapshot implementations are package-private.
 */
package dev.tidemark.rocksdb;
