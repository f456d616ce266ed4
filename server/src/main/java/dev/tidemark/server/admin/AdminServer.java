package dev.tidemark.server.admin;

import dev.tidemark.admin.v1.AdminServiceGrpc;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The admin gRPC port: {@link AdminGrpcService} (behind {@link AdminAuthInterceptor} when a token
 * is set), the gRPC health service ({@code ""} and {@code tidemark.admin.v1.AdminService}) and
 * server reflection, on its own Netty server and a small thread pool ({@value #THREADS} threads:
 * admin calls are few, and flush, delete and compaction block theirs).
 *
 * <p>{@link #shutdown()} stops accepting calls and marks health NOT_SERVING; {@link
 * #awaitTermination} waits for calls in flight; {@link #shutdownNow()} cancels them. Thread-safe.
 */
public final class AdminServer {

  /**
   * The admin port unless {@code --admin-port} says otherwise: 9091, next to the HTTP API's 9090.
   */
  public static final int DEFAULT_PORT = 9091;

  static final int THREADS = 4;

  private final Server server;
  private final ExecutorService executor;
  private final HealthStatusManager health;

  private AdminServer(Server server, ExecutorService executor, HealthStatusManager health) {
    this.server = server;
    this.executor = executor;
    this.health = health;
  }

  /**
   * Binds {@code address} (port 0: any free port) and starts serving.
   *
   * @param token the bearer token calls must carry, or null for none
   * @throws IOException if the port cannot be bound (nothing is left running)
   */
  public static AdminServer start(InetSocketAddress address, AdminGrpcService service, String token)
      throws IOException {
    HealthStatusManager health = new HealthStatusManager();
    AtomicInteger n = new AtomicInteger();
    ExecutorService executor =
        Executors.newFixedThreadPool(
            THREADS,
            r -> {
              Thread t = new Thread(r, "tidemark-admin-" + n.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    ServerServiceDefinition admin =
        token == null
            ? service.bindService()
            : ServerInterceptors.intercept(service, new AdminAuthInterceptor(token));
    Server server =
        Reflection.addTo(
                NettyServerBuilder.forAddress(address)
                    .executor(executor)
                    .addService(admin)
                    .addService(health.getHealthService()))
            .build();
    try {
      server.start();
    } catch (IOException e) {
      server.shutdownNow();
      executor.shutdownNow();
      throw e;
    }
    health.setStatus("", ServingStatus.SERVING);
    health.setStatus(AdminServiceGrpc.SERVICE_NAME, ServingStatus.SERVING);
    return new AdminServer(server, executor, health);
  }

  /** The bound port. */
  public int port() {
    return ((InetSocketAddress) server.getListenSockets().get(0)).getPort();
  }

  /** Health NOT_SERVING; new calls refused; calls in flight continue. */
  public void shutdown() {
    health.enterTerminalState();
    server.shutdown();
  }

  /** Waits for the calls in flight; true if all finished in time. */
  public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
    boolean done = server.awaitTermination(timeout, unit);
    if (done) {
      executor.shutdown();
    }
    return done;
  }

  /** Cancels the calls in flight and waits briefly for them. */
  public void shutdownNow() {
    server.shutdownNow();
    try {
      server.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    executor.shutdownNow();
  }
}
