package dev.tidemark.server;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.EvaluationResult;
import dev.tidemark.tsdb.codec.Bytes;
import dev.tidemark.tsdb.codec.CorruptRecordException;
import dev.tidemark.tsdb.codec.SeriesLimits;
import dev.tidemark.tsdb.codec.TimeBucket;
import dev.tidemark.tsdb.codec.Varints;
import dev.tidemark.tsdb.engine.Engine;
import dev.tidemark.tsdb.engine.EngineConfig;
import dev.tidemark.tsdb.engine.EngineEvents;
import dev.tidemark.tsdb.engine.RepairReport;
import dev.tidemark.tsdb.engine.StoreProblem;
import dev.tidemark.tsdb.engine.StoreVerifier;
import dev.tidemark.tsdb.engine.VerifyReport;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * tsdb-core's surface, declared and enforced ({@code docs/architecture.md}, "Module surface"): the
 * main code of every module built on tsdb-core uses only what tsdb-core exports. This module's
 * tests see the main classes of all of them (translator, receivers, rocksdb-backend, promql,
 * server), so the rule lives here; it fails the build when a class of theirs depends on anything
 * else of tsdb-core. Tests and the benchmarks may reach internals on purpose (a test that corrupts
 * a record needs the key layout, a codec benchmark the codec), so the rule reads main code only.
 *
 * <p>Java has no "friend" access: the engine reads and writes records through codec types in
 * another package, so they stay {@code public}. The rule does what a JPMS {@code exports} list
 * would, without modules on the path (the server is a shaded jar, and picocli, gRPC, generated
 * protobuf code and RocksDB's JNI loader would each need opening up).
 */
class ModuleSurfaceTest {

  private static final String CORE = "dev.tidemark.tsdb";

  /** tsdb-core's packages every module may use, whole. */
  static final Set<String> EXPORTED_PACKAGES =
      Set.of(
          CORE + ".model", // Labels, metadata: what a series is
          CORE + ".append", // the Appender seam and its outcome
          CORE + ".query", // the Querier seam, matchers, iterators
          CORE + ".kv", // the KV store SPI that rocksdb-backend implements
          CORE + ".time"); // a settable clock for tests and harnesses

  /** The engine's facade; every other engine type is package-private. */
  static final Set<Class<?>> ENGINE_FACADE =
      Set.of(
          Engine.class,
          EngineConfig.class,
          EngineEvents.class,
          StoreVerifier.class,
          VerifyReport.class,
          RepairReport.class,
          StoreProblem.class);

  /**
   * The codec types the surface exposes; the rest of the package (keys, record values, chunk
   * encoders, the head's formats) is internal to tsdb-core.
   *
   * <ul>
   *   <li>{@link TimeBucket}: the facade names buckets with it ({@code Engine.bucketInfo()}, {@code
   *       StoreProblem.bucket()});
   *   <li>{@link CorruptRecordException}: what the facade's reads throw on undecodable bytes;
   *   <li>{@link SeriesLimits}: which series an append refuses as {@code LIMIT_EXCEEDED}, checked
   *       by the translator before it resolves a stream;
   *   <li>{@link Bytes}, {@link Varints}: byte-level integers and varints, shared with the protobuf
   *       wire readers of the translator and the receivers.
   * </ul>
   */
  static final Set<Class<?>> CODEC_EXPORTED =
      Set.of(
          TimeBucket.class,
          CorruptRecordException.class,
          SeriesLimits.class,
          Bytes.class,
          Varints.class);

  private static final JavaClasses MAIN_CLASSES =
      new ClassFileImporter()
          .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
          .importPackages("dev.tidemark");

  /** A class of tsdb-core that no other module's main code may use. */
  static final DescribedPredicate<JavaClass> TSDB_CORE_INTERNAL =
      DescribedPredicate.describe(
          "tsdb-core internals (codec but "
              + names(CODEC_EXPORTED)
              + "; engine but "
              + names(ENGINE_FACADE)
              + ")",
          ModuleSurfaceTest::internal);

  static final ArchRule ONLY_THE_SURFACE =
      noClasses()
          .that()
          .resideInAPackage("dev.tidemark..")
          .and()
          .resideOutsideOfPackage(CORE + "..")
          .should()
          .dependOnClassesThat(TSDB_CORE_INTERNAL)
          .because(
              "tsdb-core exports "
                  + EXPORTED_PACKAGES
                  + ", its engine facade and a few codec types (docs/architecture.md, Module surface)");

  private static boolean internal(JavaClass c) {
    String pkg = c.getPackageName();
    if (!pkg.equals(CORE) && !pkg.startsWith(CORE + ".")) {
      return false;
    }
    if (EXPORTED_PACKAGES.contains(pkg)) {
      return false;
    }
    String top = outermost(c).getName();
    if (pkg.equals(CORE + ".engine")) {
      return ENGINE_FACADE.stream().noneMatch(f -> f.getName().equals(top));
    }
    if (pkg.equals(CORE + ".codec")) {
      return CODEC_EXPORTED.stream().noneMatch(f -> f.getName().equals(top));
    }
    return true; // a new package is internal until it is declared here
  }

  private static JavaClass outermost(JavaClass c) {
    JavaClass top = c;
    while (top.getEnclosingClass().isPresent()) {
      top = top.getEnclosingClass().get();
    }
    return top;
  }

  private static String names(Set<Class<?>> types) {
    return types.stream().map(Class::getSimpleName).sorted().collect(Collectors.joining(", "));
  }

  @Test
  void modulesBuiltOnTsdbCoreUseOnlyItsSurface() {
    ONLY_THE_SURFACE.check(MAIN_CLASSES);
  }

  @Test
  void theRuleSeesTheMainCodeOfEveryModuleBuiltOnTsdbCore() {
    Set<String> roots = new TreeSet<>();
    for (JavaClass c : MAIN_CLASSES) {
      String[] parts = c.getPackageName().split("\\.");
      if (parts.length >= 3) {
        roots.add(parts[2]);
      }
    }
    assertThat(roots)
        .as("without a module's classes the rule would pass for it without looking")
        .contains("tsdb", "translator", "receiver", "rocksdb", "promql", "server");
  }

  @Test
  void theRuleFailsAModuleThatUsesACodecInternal() {
    EvaluationResult r =
        ONLY_THE_SURFACE.evaluate(new ClassFileImporter().importClasses(UsesAnInternal.class));
    assertThat(r.hasViolation()).isTrue();
    assertThat(r.getFailureReport().getDetails().toString()).contains("codec.Keys");
  }

  @Test
  void theEngineMakesPublicOnlyItsFacade() {
    List<String> publicEngineTypes =
        MAIN_CLASSES.stream()
            .filter(c -> c.getPackageName().equals(CORE + ".engine"))
            .filter(c -> c.isTopLevelClass() && c.getModifiers().contains(JavaModifier.PUBLIC))
            .map(JavaClass::getSimpleName)
            .sorted()
            .toList();
    assertThat(publicEngineTypes)
        .as("a new public engine type joins the facade here, or stays package-private")
        .containsExactlyInAnyOrderElementsOf(
            ENGINE_FACADE.stream().map(Class::getSimpleName).toList());
  }

  /** Main code of another module would fail the rule with this. */
  static final class UsesAnInternal {
    byte[] key() {
      return dev.tidemark.tsdb.codec.Keys.schema();
    }
  }
}
