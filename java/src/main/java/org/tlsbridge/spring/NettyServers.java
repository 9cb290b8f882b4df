package org.tlsbridge.spring;

import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContextBuilder;
import java.security.Provider;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslBundles;
import org.springframework.boot.ssl.SslOptions;
import org.springframework.boot.web.server.AbstractConfigurableWebServerFactory;
import org.springframework.boot.web.server.Ssl;
import org.springframework.boot.web.server.WebServerSslBundle;
import org.springframework.util.StringUtils;
import org.tlsbridge.TlsBridgeProvider;
import reactor.netty.http.Http11SslContextSpec;
import reactor.netty.http.Http2SslContextSpec;
import reactor.netty.http.server.HttpServer;
import reactor.netty.tcp.AbstractProtocolSslContextSpec;
import reactor.netty.tcp.SslProvider;

/**
 * The Reactor Netty part shared by Spring Boot 3.5 and 4.0. Spring Boot builds
 * Netty's {@code SslContext} eagerly inside its own (non-extensible) SSL
 * customizer, with Netty's JDK mode on the default JCA provider, so the
 * context cannot be switched afterwards: this replaces the server's SSL
 * configuration, right after Spring Boot applied it, with one built from the
 * very same bundle(s) and settings as Spring Boot builds it, plus
 * {@code sslProvider(JDK)} and {@code sslContextProvider(TLSBridge)}. The
 * provider object is handed to Netty directly; the global JCA list is left
 * alone.
 *
 * <p>What Spring Boot's customizer does is kept: HTTP/2 decides the ALPN
 * spec, server-name bundles are served by SNI, and bundle updates
 * (reload-on-update) swap the context for new connections.
 */
final class NettyServers {
    /** Key of the default bundle in the per-server-name map (a server name is never empty). */
    private static final String DEFAULT = "";

    private final boolean http2;
    private final ClientAuth clientAuth;
    private final Provider provider;
    private final Map<String, SslProvider> contexts = new ConcurrentHashMap<>();

    private NettyServers(boolean http2, ClientAuth clientAuth, Provider provider) {
        this.http2 = http2;
        this.clientAuth = clientAuth;
        this.provider = provider;
    }

    /** The server with its TLS on tlsbridge, or unchanged when it has no TLS or JSSE stays. */
    static HttpServer secure(HttpServer server, AbstractConfigurableWebServerFactory factory, NativeCheck check) {
        Ssl ssl = factory.getSsl();
        if (!Ssl.isEnabled(ssl) || !check.usable()) {
            return server;
        }
        SslBundles bundles = factory.getSslBundles();
        NettyServers s = new NettyServers(factory.getHttp2() != null && factory.getHttp2().isEnabled(),
                Ssl.ClientAuth.map(ssl.getClientAuth(), ClientAuth.NONE, ClientAuth.OPTIONAL, ClientAuth.REQUIRE),
                ProviderHolder.PROVIDER);
        s.update(DEFAULT, WebServerSslBundle.get(ssl, bundles));
        s.onBundleUpdate(bundles, ssl.getBundle(), DEFAULT);
        for (Ssl.ServerNameSslBundle named : ssl.getServerNameBundles()) {
            s.update(named.serverName(), bundles.getBundle(named.bundle()));
            s.onBundleUpdate(bundles, named.bundle(), named.serverName());
        }
        return server.secure(spec -> spec.sslContext(s.contexts.get(DEFAULT).getSslContext())
                .setSniAsyncMappings((name, promise) -> promise.setSuccess(s.forServerName(name))));
    }

    /**
     * The customizers with tlsbridge's first: it must follow Spring Boot's SSL directly, and an
     * application's own customizer keeps the last word on its server.
     */
    static <C> List<C> first(C tlsbridge, Collection<? extends C> others) {
        List<C> all = new ArrayList<>();
        all.add(tlsbridge);
        all.addAll(others);
        return all;
    }

    private SslProvider forServerName(String serverName) {
        SslProvider p = serverName == null ? null : contexts.get(serverName);
        return p != null ? p : contexts.get(DEFAULT);
    }

    private void onBundleUpdate(SslBundles bundles, String bundleName, String key) {
        if (StringUtils.hasText(bundleName)) {
            bundles.addBundleUpdateHandler(bundleName, b -> update(key, b));
        }
    }

    private void update(String key, SslBundle bundle) {
        contexts.put(key, SslProvider.builder().sslContext(spec(bundle)).build());
    }

    /** Spring Boot's spec for the bundle, in Netty's JDK mode on tlsbridge. */
    private SslProvider.GenericSslContextSpec<?> spec(SslBundle bundle) {
        AbstractProtocolSslContextSpec<?> spec = http2
                ? Http2SslContextSpec.forServer(bundle.getManagers().getKeyManagerFactory())
                : Http11SslContextSpec.forServer(bundle.getManagers().getKeyManagerFactory());
        return (SslProvider.GenericSslContextSpec<?>) spec.configure((SslContextBuilder b) -> {
            SslOptions options = bundle.getOptions();
            b.trustManager(bundle.getManagers().getTrustManagerFactory())
                    .protocols(options.getEnabledProtocols())
                    .ciphers(SslOptions.asSet(options.getCiphers()))
                    .clientAuth(clientAuth)
                    .sslProvider(io.netty.handler.ssl.SslProvider.JDK)
                    .sslContextProvider(provider);
        });
    }

    /** One provider object for every Netty context of the JVM, made only once tlsbridge is known to load. */
    private static final class ProviderHolder {
        static final Provider PROVIDER = new TlsBridgeProvider();
    }
}
