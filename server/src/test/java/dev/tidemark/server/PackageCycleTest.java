package dev.tidemark.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The packages of the server module depend on each other without a cycle: {@code
 * dev.tidemark.server} (the composition root: {@code main}, configuration, lifecycle) uses {@code
 * dev.tidemark.server.admin} (it starts the admin port and registers {@code tidemark admin}), and
 * admin never uses the root back; both may use {@code dev.tidemark.server.text}. A cycle would let
 * the admin tool (and any other package) grow into the root until neither can change alone.
 *
 * <p>Reads the compiled classes of {@code src/main} (not the tests): every class and type
 * descriptor in a class file's constant pool names a class it uses, whether in a signature, a
 * field, a call, a cast or an annotation. Constants the compiler inlines ({@code static final int})
 * leave no trace, which is what we want: they create no dependency at run time either.
 */
class PackageCycleTest {

  private static final String ROOT = "dev.tidemark.server";

  /**
   * A class name in internal form inside a constant pool string: {@code
   * dev/tidemark/server/admin/AdminCommand}.
   */
  private static final Pattern CLASS_NAME =
      Pattern.compile("dev/tidemark/server(?:/[A-Za-z0-9_$]+)+");

  @Test
  void serverPackagesFormNoCycle() throws IOException {
    Map<String, Map<String, Set<String>>> uses = packageDependencies();
    // the scan sees something: the root registers the admin command and starts the admin port
    assertThat(uses.getOrDefault(ROOT, Map.of())).containsKey(ROOT + ".admin");

    List<String> cycles = new ArrayList<>();
    for (String from : uses.keySet()) {
      for (String to : uses.get(from).keySet()) {
        if (from.compareTo(to) < 0 && reaches(uses, to, from)) {
          cycles.add(
              from
                  + " -> "
                  + to
                  + " ("
                  + uses.get(from).get(to)
                  + ") and back: "
                  + path(uses, to, from));
        }
      }
    }
    assertThat(cycles).as("package cycles among %s.*", ROOT).isEmpty();
  }

  @Test
  void adminUsesNothingOfTheRootPackage() throws IOException {
    assertThat(packageDependencies().getOrDefault(ROOT + ".admin", Map.of()).get(ROOT))
        .as("classes of %s used by %s.admin", ROOT, ROOT)
        .isNull();
  }

  /** package → package it uses → the classes that use it ({@code AdminCommand -> ServerConfig}). */
  private static Map<String, Map<String, Set<String>>> packageDependencies() throws IOException {
    Path classes;
    try {
      classes =
          Path.of(ServerConfig.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
    Map<String, Map<String, Set<String>>> uses = new TreeMap<>();
    List<Path> files;
    try (Stream<Path> walk = Files.walk(classes.resolve(ROOT.replace('.', '/')))) {
      files = walk.filter(p -> p.toString().endsWith(".class")).toList();
    }
    assertThat(files).as("compiled classes under %s", classes).isNotEmpty();
    for (Path file : files) {
      String self = classes.relativize(file).toString().replace(java.io.File.separatorChar, '/');
      self = self.substring(0, self.length() - ".class".length());
      String from = packageOf(self);
      for (String used : referencedClasses(file)) {
        String to = packageOf(used);
        if (!to.equals(from)) {
          uses.computeIfAbsent(from, k -> new TreeMap<>())
              .computeIfAbsent(to, k -> new TreeSet<>())
              .add(simpleName(self) + " -> " + simpleName(used));
        }
      }
    }
    return uses;
  }

  private static String packageOf(String internalName) {
    return internalName.substring(0, internalName.lastIndexOf('/')).replace('/', '.');
  }

  private static String simpleName(String internalName) {
    return internalName.substring(internalName.lastIndexOf('/') + 1);
  }

  private static boolean reaches(
      Map<String, Map<String, Set<String>>> uses, String from, String to) {
    return path(uses, from, to) != null;
  }

  /** A chain of packages from {@code from} to {@code to} (breadth first), or null. */
  private static String path(Map<String, Map<String, Set<String>>> uses, String from, String to) {
    Map<String, String> previous = new TreeMap<>();
    List<String> queue = new ArrayList<>(List.of(from));
    previous.put(from, "");
    for (int i = 0; i < queue.size(); i++) {
      String p = queue.get(i);
      if (p.equals(to)) {
        List<String> chain = new ArrayList<>();
        for (String q = p; !q.isEmpty(); q = previous.get(q)) {
          chain.add(0, q);
        }
        return String.join(" -> ", chain);
      }
      for (String next : uses.getOrDefault(p, Map.of()).keySet()) {
        if (previous.putIfAbsent(next, p) == null) {
          queue.add(next);
        }
      }
    }
    return null;
  }

  /**
   * The classes under {@code dev/tidemark/server} a class file names: its constant pool's UTF-8
   * entries hold every class name (internal form) and every field, method and generic signature
   * (JVMS §4.4). Other entries are skipped by their sizes.
   */
  static Set<String> referencedClasses(Path classFile) throws IOException {
    Set<String> out = new TreeSet<>();
    try (InputStream in = Files.newInputStream(classFile);
        DataInputStream data = new DataInputStream(new java.io.BufferedInputStream(in))) {
      if (data.readInt() != 0xCAFEBABE) {
        throw new IOException(classFile + " is not a class file");
      }
      data.readUnsignedShort(); // minor version
      data.readUnsignedShort(); // major version
      int count = data.readUnsignedShort();
      for (int i = 1; i < count; i++) {
        int tag = data.readUnsignedByte();
        switch (tag) {
          case 1: // Utf8
            Matcher m = CLASS_NAME.matcher(data.readUTF());
            while (m.find()) {
              out.add(m.group());
            }
            break;
          case 7: // Class
          case 8: // String
          case 16: // MethodType
          case 19: // Module
          case 20: // Package
            data.skipNBytes(2);
            break;
          case 15: // MethodHandle
            data.skipNBytes(3);
            break;
          case 3: // Integer
          case 4: // Float
          case 9: // Fieldref
          case 10: // Methodref
          case 11: // InterfaceMethodref
          case 12: // NameAndType
          case 17: // Dynamic
          case 18: // InvokeDynamic
            data.skipNBytes(4);
            break;
          case 5: // Long
          case 6: // Double
            data.skipNBytes(8);
            i++; // takes two entries
            break;
          default:
            throw new IOException(
                classFile + ": unknown constant pool tag " + tag + " at entry " + i);
        }
      }
    }
    return out;
  }
}
