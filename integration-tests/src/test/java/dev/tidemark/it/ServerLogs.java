package dev.tidemark.it;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.LifecycleMethodExecutionExceptionHandler;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;

/**
 * Prints the output of every {@link ServerProcess} started so far when a test (or a lifecycle
 * method) fails, then rethrows; after the class, kills servers that a failed test left running.
 */
final class ServerLogs
    implements TestExecutionExceptionHandler,
        LifecycleMethodExecutionExceptionHandler,
        AfterAllCallback {
  private static final Set<ServerProcess> PRINTED = new HashSet<>();

  @Override
  public void handleTestExecutionException(ExtensionContext context, Throwable t) throws Throwable {
    print(context, t);
    throw t;
  }

  @Override
  public void handleBeforeAllMethodExecutionException(ExtensionContext context, Throwable t)
      throws Throwable {
    print(context, t);
    throw t;
  }

  @Override
  public void handleBeforeEachMethodExecutionException(ExtensionContext context, Throwable t)
      throws Throwable {
    print(context, t);
    throw t;
  }

  @Override
  public void handleAfterEachMethodExecutionException(ExtensionContext context, Throwable t)
      throws Throwable {
    print(context, t);
    throw t;
  }

  @Override
  public void handleAfterAllMethodExecutionException(ExtensionContext context, Throwable t)
      throws Throwable {
    print(context, t);
    throw t;
  }

  @Override
  public void afterAll(ExtensionContext context) {
    for (ServerProcess p : ServerProcess.STARTED) {
      p.close();
    }
  }

  private static synchronized void print(ExtensionContext context, Throwable t) {
    StringBuilder sb = new StringBuilder();
    sb.append("\n===== ")
        .append(context.getDisplayName())
        .append(" failed: ")
        .append(t)
        .append('\n');
    for (ServerProcess p : ServerProcess.STARTED) {
      if (!PRINTED.add(p)) {
        sb.append("----- ").append(p).append(": log printed above\n");
        continue;
      }
      sb.append("----- ").append(p).append(", log ").append(p.logFile()).append(":\n");
      sb.append(p.log()).append('\n');
    }
    sb.append("=====\n");
    System.err.print(sb);
    System.err.flush();
  }
}
