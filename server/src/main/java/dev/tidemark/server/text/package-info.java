/**
 * How people write values: durations and sizes, for settings, command lines and the admin API.
 * Depends on nothing else in Tidemark, so that every {@code dev.tidemark.server} package may use
 * it.
 */
package dev.tidemark.server.text;
