/**
 * End-to-end tests against the built server jar ({@code server/target/tidemark.jar}) started as a
 * separate process ({@link dev.tidemark.it.ServerProcess}), run by maven-failsafe-plugin in {@code
 * mvn verify}. After a server stopped, its data folder is read back through the engine ({@link
 * dev.tidemark.it.StoredData}). {@code IndexIT} keeps this list whole: one line per test class.
 *
 * <ul>
 *   <li>{@code AdminIT}: every admin RPC and {@code tidemark admin} command; deletes survive
 *       SIGKILL and a restart, a checkpoint serves as the original did, the token is enforced,
 *       selectors matching everything are refused;
 *   <li>{@code AppendAtomicityIT}: a point over the format's limits is refused on its own as the
 *       first write into an hour; its neighbours, the hour and a restart after SIGKILL are intact;
 *   <li>{@code BackPressureIT}: past the head memory budget, new series are refused one by one in
 *       partial success while series already in the head are stored, over gRPC and HTTP;
 *   <li>{@code BadInputIT}: undecodable, oversized and per-point-invalid input gets the documented
 *       status, and the valid points of the same request are stored;
 *   <li>{@code CompactionCrashIT}: SIGKILL during bucket compaction, repeated, loses and duplicates
 *       nothing and leaves a store that verifies clean;
 *   <li>{@code CrashIT}: SIGKILL (and SIGTERM) of a server receiving exports, also while it writes
 *       frozen head parts; acknowledged exports survive, unanswered ones are all or nothing;
 *   <li>{@code ExportImportIT}: {@code /api/v1/export} from one server, {@code /api/v1/import} into
 *       another with curl, in JSON lines and the Prometheus text format, every sample bit for bit;
 *   <li>{@code FederateIT}: a real Prometheus scrapes {@code /federate} with {@code honor_labels}
 *       and reads back the series sent over OTLP; a bad selector gets 400;
 *   <li>{@code HostileClientIT}: slow connections, gzip bombs, malformed requests and garbage on
 *       every port leave a small-heap server serving normal clients;
 *   <li>{@code IndexIT}: this list names every test class of the package;
 *   <li>{@code LauncherIT}: {@code ./tidemark} picks the newest JDK 17 or newer ({@code
 *       TIDEMARK_JAVA} wins), passes the options for it, says why when none fits, and starts;
 *   <li>{@code NativeLibraryCacheIT}: RocksDB's native library is extracted once into the cache
 *       folder and reused, never copied into the temporary folder at each start;
 *   <li>{@code OtelSdkIT}: the real OpenTelemetry Java SDK over OTLP/gRPC and http/protobuf,
 *       cumulative and delta, every series read back with its exact name, labels and values;
 *   <li>{@code OverloadIT}: senders beyond the in-flight budget are refused retryably with nothing
 *       stored, every acknowledged request is stored whole and survives SIGKILL;
 *   <li>{@code QueryApiIT}: the Prometheus HTTP API as Grafana or promtool use it: every endpoint,
 *       parameter form, error type, gzip, concurrency limit, timeout and client disconnect;
 *   <li>{@code ReadmeQuickStartIT}: the README's first-sample commands, run as written with bash
 *       and curl against a real server, send a sample and read it back;
 *   <li>{@code RemoteReadIT}: a real Prometheus with Tidemark as its {@code remote_read} store
 *       reads back series sent over OTLP through its own query API;
 *   <li>{@code RemoteWriteCrashIT}: SIGKILL during remote write 1.0 loses no sample answered 204
 *       and stores nothing that was not sent;
 *   <li>{@code RemoteWriteIT}: remote write 1.0 and 2.0 and Prometheus' OTLP path, read back
 *       through the query and metadata APIs as Prometheus answers;
 *   <li>{@code SeriesLimitIT}: past {@code --max-active-series}, a new series' point is refused on
 *       its own (OTLP partial success, remote write's answer) and counted in {@code /metrics};
 *   <li>{@code StartupIT}: the startup line, and one-line errors with the documented exit codes for
 *       a locked folder, a port in use and a bad setting;
 *   <li>{@code WebUiIT}: the web UI in headless chromium: a query typed with completion, graphed
 *       and tabulated, a shared link reproducing two panels, parse errors inline, and the
 *       cardinality, explore and status pages showing what the API answers;
 *   <li>{@code WebConfigIT}: {@code --web-config-file}: curl, the OpenTelemetry SDK's OTLP/gRPC and
 *       OTLP/HTTP exporters and a real Prometheus (scrape and remote write) over TLS with basic
 *       auth; client certificates required and verified; SIGHUP and {@code POST /-/reload} swap
 *       users and certificates and refuse a bad file; JSON logs;
 *   <li>{@code VerifyIT}: {@code tidemark verify} finds the damage of issue #9's append bug, {@code
 *       --repair} fixes it, and a server on the repaired store serves every readable sample.
 * </ul>
 *
 * <p>Helpers: {@code ServerProcess} (start, stop, kill the jar), {@code StoredData} (read a folder
 * back), {@code ServerLogs}, {@code Otlp} (requests), {@code OtelSdkQueries}, {@code AdminRpc} and
 * {@code AdminCli} (the admin API and CLI), {@code TestCerts} (a CA and certificates by keytool).
 */
package dev.tidemark.it;
