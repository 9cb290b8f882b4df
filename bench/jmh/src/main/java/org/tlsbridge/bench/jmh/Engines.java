package org.tlsbridge.bench.jmh;

import com.amazon.corretto.crypto.provider.AmazonCorrettoCryptoProvider;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.netty.util.ReferenceCountUtil;
import java.security.Provider;
import java.security.Security;
import javax.crypto.Cipher;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import org.conscrypt.Conscrypt;
import org.tlsbridge.TlsBridgeProvider;
import org.wildfly.openssl.OpenSSLProvider;

/**
 * The engines a benchmark's provider param names, one value per engine: a
 * client and a server engine of that provider over the certificates in
 * TB_BENCH_PKI, built the way that engine's users build them. Every value
 * runs the same benchmark code; only where the engines come from differs.
 *
 * <p>A figure labelled with a peer's name that silently ran on SunJSSE's
 * own code would compare nothing, so {@link #verify} checks the class of
 * the engines handed out (and, for ACCP, that the record cipher comes from
 * it) and the benchmark's setup fails otherwise.
 */
abstract class Engines {
    /** The TLS 1.3 suite of every wrap+unwrap figure (the servers' primary suite). */
    static final String SUITE = "TLS_AES_128_GCM_SHA256";
    private static final String ACCP = "AmazonCorrettoCryptoProvider";
    /** Why wildfly-openssl has no ECDSA figure (bench/runner/jmh.py says the same). */
    static final String WILDFLY_RSA_ONLY = "wildfly-openssl 2.2.5 takes only RSA and DSA keys from its key manager: "
            + "with an ECDSA P-256 key it has no certificate to send";

    final String provider;
    /** The engine class this provider must hand out, exactly. */
    private final String engineClass;

    private Engines(String provider, String engineClass) {
        this.provider = provider;
        this.engineClass = engineClass;
    }

    abstract SSLEngine client();

    abstract SSLEngine server();

    /**
     * Whether the engines take a TLS 1.3 suite list. Conscrypt and BoringSSL
     * do not: they run on their defaults, and the negotiated suite is
     * checked instead.
     */
    boolean pinsTls13() {
        return true;
    }

    /** Gives an engine's native state back at once where that is the engine's contract. */
    void release(SSLEngine e) {
    }

    static Engines of(String provider, String key) throws Exception {
        switch (provider) {
            case "TLSBridge":
                return new Jsse(provider, new TlsBridgeProvider(), "TLS", key, "org.tlsbridge.engine.TlsBridgeEngine",
                        true, TlsBridgeProvider.openSslVersion());
            case "SunJSSE":
                return new Jsse(provider, Security.getProvider("SunJSSE"), "TLS", key,
                        "sun.security.ssl.SSLEngineImpl", true, "");
            case "SunJSSE-ACCP":
                // ACCP first in the JCA list, as its users install it: SunJSSE
                // asks for its ciphers, MACs and key agreements by name only
                AmazonCorrettoCryptoProvider.install();
                AmazonCorrettoCryptoProvider.INSTANCE.assertHealthy();
                return new Jsse(provider, Security.getProvider("SunJSSE"), "TLS", key,
                        "sun.security.ssl.SSLEngineImpl", true,
                        "ACCP " + AmazonCorrettoCryptoProvider.INSTANCE.getVersionStr());
            case "Conscrypt":
                if (!Conscrypt.isAvailable()) {
                    throw new IllegalStateException("Conscrypt's native library did not load on this machine");
                }
                Conscrypt.Version v = Conscrypt.version();
                return new Jsse(provider, Conscrypt.newProvider(), "TLS", key, "org.conscrypt.Java8EngineWrapper",
                        false, "Conscrypt " + v.major() + "." + v.minor() + "." + v.patch());
            case "wildfly-openssl":
                // its natives open the system's libssl by the paths the runner
                // passes (bench/runner/jmh.py), as for tomcat-wildfly-openssl
                String ssl = System.getProperty("org.wildfly.openssl.path.ssl");
                if (ssl == null) {
                    throw new IllegalStateException("org.wildfly.openssl.path.ssl is not set (bench/runner/jmh.py "
                            + "sets it to the system's libssl.so.3)");
                }
                if (!key.equals("rsa")) {
                    throw new IllegalStateException(WILDFLY_RSA_ONLY);
                }
                return new Jsse(provider, OpenSSLProvider.INSTANCE, "openssl.TLS", key,
                        "org.wildfly.openssl.OpenSSLEngine", true, ssl);
            case "Netty-OpenSSL":
                return new Netty(key);
            default:
                throw new IllegalArgumentException("unknown provider " + provider);
        }
    }

    /**
     * Throws unless e is the engine this provider promised, and says which
     * class it was on standard output (JMH's log, read by the runner).
     */
    void verify(SSLEngine e, String side) {
        String got = e.getClass().getName();
        if (!got.equals(engineClass)) {
            throw new IllegalStateException(provider + " handed out a " + got + " " + side + " engine, not "
                    + engineClass);
        }
        boolean accp = Security.getProvider(ACCP) != null;
        String gcm;
        try {
            gcm = Cipher.getInstance("AES/GCM/NoPadding").getProvider().getName();
        } catch (Exception ex) {
            throw new IllegalStateException("no AES/GCM cipher: " + ex.getMessage(), ex);
        }
        if (provider.equals("SunJSSE-ACCP") && !gcm.equals(ACCP)) {
            throw new IllegalStateException("AES/GCM is served by " + gcm + ", not ACCP");
        }
        if (!provider.equals("SunJSSE-ACCP") && accp) {
            // a fork of its own per param value keeps ACCP out of the others
            throw new IllegalStateException("ACCP is installed in the " + provider + " benchmark's JVM");
        }
        System.out.println("BENCH-ENGINE " + provider + " " + side + " " + got + " " + library());
    }

    /** What runs under the engines (library, version) for the log, "-" when nothing but the JDK. */
    abstract String library();

    /** Engines from a JSSE provider's SSLContext. */
    private static final class Jsse extends Engines {
        private final SSLContext client;
        private final SSLContext server;
        private final boolean pins;
        private final String library;

        Jsse(String name, Provider p, String protocol, String key, String engineClass, boolean pins, String library)
                throws Exception {
            super(name, engineClass);
            client = Pki.client(p, protocol);
            server = Pki.server(p, protocol, key);
            this.pins = pins;
            this.library = library;
        }

        @Override
        boolean pinsTls13() {
            return pins;
        }

        @Override
        String library() {
            return library.isEmpty() ? "-" : library;
        }

        @Override
        SSLEngine client() {
            SSLEngine e = client.createSSLEngine();
            e.setUseClientMode(true);
            return e;
        }

        @Override
        SSLEngine server() {
            SSLEngine e = server.createSSLEngine();
            e.setUseClientMode(false);
            return e;
        }
    }

    /**
     * Netty's OpenSSL engine (netty-tcnative-boringssl-static), from
     * SslContext.newEngine as a Netty pipeline gets it. Its engines are
     * reference-counted: each is released when its pair is done.
     */
    private static final class Netty extends Engines {
        private final SslContext client;
        private final SslContext server;

        Netty(String key) throws Exception {
            super("Netty-OpenSSL", "io.netty.handler.ssl.OpenSslEngine");
            if (!OpenSsl.isAvailable()) {
                throw new IllegalStateException("netty-tcnative did not load: " + OpenSsl.unavailabilityCause());
            }
            client = SslContextBuilder.forClient().trustManager(Pki.trust()).sslProvider(SslProvider.OPENSSL).build();
            server = SslContextBuilder.forServer(Pki.keys(key)).sslProvider(SslProvider.OPENSSL).build();
        }

        @Override
        SSLEngine client() {
            return client.newEngine(ByteBufAllocator.DEFAULT);
        }

        @Override
        SSLEngine server() {
            return server.newEngine(ByteBufAllocator.DEFAULT);
        }

        @Override
        boolean pinsTls13() {
            return false;
        }

        @Override
        void release(SSLEngine e) {
            ReferenceCountUtil.release(e);
        }

        @Override
        String library() {
            String v = OpenSsl.versionString();
            if (!v.contains("BoringSSL")) {
                throw new IllegalStateException("netty-tcnative runs on " + v + ", not BoringSSL");
            }
            return v;
        }
    }
}
