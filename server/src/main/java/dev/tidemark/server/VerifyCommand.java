package dev.tidemark.server;

import dev.tidemark.rocksdb.RocksDbConfig;
import dev.tidemark.rocksdb.RocksDbKvStore;
import dev.tidemark.tsdb.engine.RepairReport;
import dev.tidemark.tsdb.engine.StoreVerifier;
import dev.tidemark.tsdb.engine.VerifyReport;
import dev.tidemark.tsdb.kv.KvStoreException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code tidemark verify --data-dir DIR [--repair]}: checks a store offline with {@link
 * StoreVerifier}, opening its RocksDB folder directly (so no server may run on it: RocksDB's lock
 * refuses the second opener, and the command says so), and with {@code --repair} makes it
 * consistent. Prints the report on standard output.
 *
 * <p>Exit codes: {@value #EXIT_CLEAN} the store is consistent (after the repair, with {@code
 * --repair}); {@value #EXIT_PROBLEMS} problems were found and not repaired, or the store cannot be
 * opened (a server holds it); {@value #EXIT_USAGE} a bad command line (no such folder, not a
 * store).
 */
@Command(
    name = "verify",
    usageHelpWidth = 100,
    customSynopsis = {"tidemark verify --data-dir DIR [--repair]"},
    description = {
      "Checks a store offline: every record against its indexes (BucketList, SeriesDictionary,",
      "ForwardIndex, InvertedIndex and the all-series posting, TimeSeries, HeadLog), and that every",
      "record decodes. Stop the server first. With --repair, makes the store consistent without",
      "losing a readable sample: buckets with records go back into the BucketList, postings and",
      "dictionary entries are cleaned and rebuilt from the ForwardIndex records, records that",
      "cannot be read (undecodable, or of series without a ForwardIndex record) are dropped.",
      ""
    },
    footer = {
      "",
      "Exit codes: 0 the store is consistent (after the repair, with --repair), 1 problems were",
      "found and not repaired, or the store cannot be opened (is a server running on it?),",
      "2 bad command line (no such folder, not a Tidemark data folder)."
    })
final class VerifyCommand implements Callable<Integer> {

  static final int EXIT_CLEAN = 0;
  static final int EXIT_PROBLEMS = 1;
  static final int EXIT_USAGE = 2;

  @Spec CommandSpec spec;

  @Option(
      names = {"-h", "--help"},
      usageHelp = true,
      description = "Show this help message and exit.")
  boolean help;

  @Option(
      names = "--data-dir",
      required = true,
      paramLabel = "DIR",
      description = "Data folder of the store (the server's --data-dir).")
  String dataDir;

  @Option(names = "--repair", description = "Repair what is inconsistent, then verify again.")
  boolean repair;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    Path dir;
    try {
      dir = Path.of(dataDir).toAbsolutePath().normalize();
    } catch (InvalidPathException e) {
      return usage(err, "invalid --data-dir '" + dataDir + "': " + e.getReason());
    }
    if (!Files.isDirectory(dir)) {
      return usage(err, "data folder " + dir + " does not exist");
    }
    if (!Files.isRegularFile(dir.resolve("CURRENT"))) {
      return usage(err, dir + " is not a Tidemark data folder (no RocksDB store in it)");
    }
    RocksDbKvStore store;
    try {
      store = RocksDbKvStore.open(dir, RocksDbConfig.defaults());
    } catch (KvStoreException e) {
      String msg = String.valueOf(e.getMessage());
      err.println(
          "tidemark verify: "
              + (msg.contains("in use by another")
                  ? "data folder "
                      + dir
                      + " is locked by another process: is a Tidemark server running"
                      + " on it? Stop it first; verify reads (and repairs) the store offline."
                  : "cannot open the store in " + dir + ": " + msg));
      err.flush();
      return EXIT_PROBLEMS;
    }
    try (store) {
      out.println("tidemark verify: " + dir);
      if (!repair) {
        VerifyReport r = StoreVerifier.verify(store);
        out.print(r.format());
        if (!r.clean()) {
          out.println(
              "to repair: tidemark verify --data-dir "
                  + dir
                  + " --repair (with the server stopped)");
        }
        out.flush();
        return r.clean() ? EXIT_CLEAN : EXIT_PROBLEMS;
      }
      RepairReport r = StoreVerifier.repair(store);
      out.print(r.before().format());
      if (r.before().clean()) {
        out.flush();
        return EXIT_CLEAN;
      }
      out.println("repair:");
      out.print(r.formatActions());
      if (r.refusal() == null) {
        out.println("after the repair:");
        out.print(r.after().format());
      }
      out.flush();
      return r.clean() ? EXIT_CLEAN : EXIT_PROBLEMS;
    } catch (KvStoreException e) {
      out.flush();
      err.println("tidemark verify: storage failure in " + dir + ": " + e.getMessage());
      err.flush();
      return EXIT_PROBLEMS;
    }
  }

  private static int usage(PrintWriter err, String message) {
    err.println("tidemark verify: " + message);
    err.println("Try 'tidemark verify --help'.");
    err.flush();
    return EXIT_USAGE;
  }
}
