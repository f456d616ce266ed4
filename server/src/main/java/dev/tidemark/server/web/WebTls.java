package dev.tidemark.server.web;

import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2SecurityUtil;
import io.grpc.netty.shaded.io.netty.handler.ssl.ApplicationProtocolConfig;
import io.grpc.netty.shaded.io.netty.handler.ssl.ApplicationProtocolNames;
import io.grpc.netty.shaded.io.netty.handler.ssl.ClientAuth;
import io.grpc.netty.shaded.io.netty.handler.ssl.DelegatingSslContext;
import io.grpc.netty.shaded.io.netty.handler.ssl.JdkSslContext;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.grpc.netty.shaded.io.netty.handler.ssl.SupportedCipherSuiteFilter;
import java.net.Socket;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509ExtendedTrustManager;
import javax.net.ssl.X509TrustManager;
import org.eclipse.jetty.util.ssl.SslContextFactory;

/**
 * One TLS context for every listener that serves TLS (the HTTP API and OTLP/HTTP through Jetty,
 * OTLP/gRPC through Netty), whose certificate, key, client CA, client auth type and versions can be
 * replaced while it serves ({@link #update}): a handshake uses the {@link WebConfig.Tls} current
 * when it starts, a connection already open keeps what it negotiated. That is how Prometheus'
 * exporter-toolkit behaves (it re-reads the file at every handshake); here the file is re-read on a
 * reload (docs/architecture.md, "TLS and authentication").
 *
 * <p>How: the JSSE {@link SSLContext} is built once over a key manager and a trust manager that
 * read the current settings; each new {@link SSLEngine} gets the current client auth type ({@code
 * want}/{@code need}) and protocols from {@link #configure(SSLEngine)}, which Jetty calls through
 * its {@link SslContextFactory.Server#customize(SSLEngine)} and Netty through a {@link
 * DelegatingSslContext}. Client auth types that do not verify ({@code RequestClientCert}, {@code
 * RequireAnyClientCert}) accept any client certificate, as Go's. Thread-safe.
 */
public final class WebTls {

  private volatile WebConfig.Tls current;

  /**
   * The certificate and key each alias handed to JSSE stands for: a handshake that chose an alias
   * before an update still gets that alias' chain and key. Holds the newest two.
   */
  private final ConcurrentHashMap<String, WebConfig.Tls> aliases = new ConcurrentHashMap<>();

  private final AtomicLong generation = new AtomicLong();
  private volatile String alias;
  private final SSLContext sslContext;

  public WebTls(WebConfig.Tls tls) {
    update(tls);
    try {
      sslContext = SSLContext.getInstance("TLS");
      sslContext.init(
          new KeyManager[] {new CurrentKeyManager()},
          new TrustManager[] {new CurrentTrustManager()},
          null);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("the JDK offers no TLS context", e);
    }
  }

  /** Serves {@code tls} from the next handshake on. */
  public void update(WebConfig.Tls tls) {
    String a = "tidemark-" + generation.incrementAndGet();
    aliases.put(a, tls);
    aliases.keySet().removeIf(k -> !k.equals(a) && !k.equals(alias));
    current = tls;
    alias = a;
  }

  /** The settings of the next handshake. */
  public WebConfig.Tls current() {
    return current;
  }

  /** Applies the current client auth type and protocols to a new server-side engine. */
  void configure(SSLEngine engine) {
    WebConfig.Tls t = current;
    List<String> supported = Arrays.asList(engine.getSupportedProtocols());
    engine.setEnabledProtocols(
        t.protocols().stream().filter(supported::contains).toArray(String[]::new));
    if (t.clientAuth().required) {
      engine.setNeedClientAuth(true);
    } else if (t.clientAuth() != WebConfig.ClientAuth.NO_CLIENT_CERT) {
      engine.setWantClientAuth(true);
    } else {
      engine.setWantClientAuth(false);
    }
  }

  /** Jetty's factory for a TLS connector over this context (HTTP/1.1). */
  public SslContextFactory.Server jetty() {
    SslContextFactory.Server f =
        new SslContextFactory.Server() {
          @Override
          public void customize(SSLEngine engine) {
            super.customize(engine);
            configure(engine);
          }
        };
    f.setSslContext(sslContext);
    f.setEndpointIdentificationAlgorithm(null);
    return f;
  }

  /** Netty's context for the gRPC server over this context (ALPN {@code h2}, gRPC's ciphers). */
  public SslContext grpc() {
    SslContext base =
        new JdkSslContext(
            sslContext,
            false,
            Http2SecurityUtil.CIPHERS,
            SupportedCipherSuiteFilter.INSTANCE,
            new ApplicationProtocolConfig(
                ApplicationProtocolConfig.Protocol.ALPN,
                ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE,
                ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT,
                ApplicationProtocolNames.HTTP_2),
            ClientAuth.NONE,
            null,
            false);
    return new DelegatingSslContext(base) { // NettyServerBuilder checks ALPN and h2 on it
      @Override
      protected void initEngine(SSLEngine engine) {
        configure(engine);
      }
    };
  }

  /** Hands JSSE the current certificate and key under an alias naming their generation. */
  private final class CurrentKeyManager extends X509ExtendedKeyManager {
    @Override
    public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
      return chooseServerAlias(keyType, issuers, null);
    }

    @Override
    public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
      String a = alias;
      WebConfig.Tls t = aliases.get(a);
      return t != null && fits(t.key(), keyType) ? a : null;
    }

    private boolean fits(PrivateKey key, String keyType) {
      String alg = key.getAlgorithm();
      return keyType.equals(alg)
          || (alg.equals("RSA") && keyType.equals("RSASSA-PSS"))
          || (alg.startsWith("Ed") && keyType.equals("EdDSA"));
    }

    @Override
    public String[] getServerAliases(String keyType, Principal[] issuers) {
      String a = chooseServerAlias(keyType, issuers, null);
      return a == null ? null : new String[] {a};
    }

    @Override
    public X509Certificate[] getCertificateChain(String alias) {
      WebConfig.Tls t = aliases.get(alias);
      return t == null ? null : t.chain().toArray(new X509Certificate[0]);
    }

    @Override
    public PrivateKey getPrivateKey(String alias) {
      WebConfig.Tls t = aliases.get(alias);
      return t == null ? null : t.key();
    }

    @Override
    public String[] getClientAliases(String keyType, Principal[] issuers) {
      return null;
    }

    @Override
    public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
      return null;
    }
  }

  /**
   * Verifies client certificates against the current client CA when the client auth type says so,
   * and accepts any otherwise (as Go's RequestClientCert and RequireAnyClientCert).
   */
  private final class CurrentTrustManager extends X509ExtendedTrustManager {
    /** The PKIX trust manager of the client CAs of one {@link WebConfig.Tls}. */
    private volatile WebConfig.Tls builtFor;

    private volatile X509TrustManager pkix;

    private X509TrustManager pkix(WebConfig.Tls t) throws CertificateException {
      if (builtFor != t) {
        try {
          KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
          ks.load(null, null);
          int i = 0;
          for (X509Certificate ca : t.clientCas()) {
            ks.setCertificateEntry("ca-" + i++, ca);
          }
          TrustManagerFactory tmf =
              TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
          tmf.init(ks);
          for (TrustManager tm : tmf.getTrustManagers()) {
            if (tm instanceof X509TrustManager x) {
              pkix = x;
            }
          }
          builtFor = t;
        } catch (GeneralSecurityException | java.io.IOException e) {
          throw new CertificateException("cannot build the client CA trust store", e);
        }
      }
      return pkix;
    }

    private void check(X509Certificate[] chain, String authType) throws CertificateException {
      WebConfig.Tls t = current;
      if (t.clientAuth().verified) {
        pkix(t).checkClientTrusted(chain, authType);
      }
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
        throws CertificateException {
      check(chain, authType);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
        throws CertificateException {
      check(chain, authType);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType)
        throws CertificateException {
      check(chain, authType);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
        throws CertificateException {
      throw new CertificateException("server-side only");
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
        throws CertificateException {
      throw new CertificateException("server-side only");
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType)
        throws CertificateException {
      throw new CertificateException("server-side only");
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
      List<X509Certificate> cas = new ArrayList<>(current.clientCas());
      return cas.toArray(new X509Certificate[0]);
    }
  }
}
