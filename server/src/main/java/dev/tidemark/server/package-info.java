/** The composition root: wires receivers, translator, engine and RocksDB, and owns {@code main}. */
package dev.tidemark.server;
