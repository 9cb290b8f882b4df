package org.tlsbridge.bench.jmh;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.Provider;
import java.security.cert.CertificateFactory;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * Key and trust material over the certificates scripts/bench made (directory
 * in TB_BENCH_PKI: ca.pem, rsa.p12, ec.p12, password m1oZilla), and the
 * contexts of the JSSE providers built on them. An environment variable
 * rather than a system property because JMH forks inherit it as is.
 */
final class Pki {
    static final String PASSWORD = "m1oZilla";

    private Pki() {
    }

    static Path dir() {
        String d = System.getenv("TB_BENCH_PKI");
        if (d == null || d.isEmpty()) {
            throw new IllegalStateException("TB_BENCH_PKI is not set (scripts/bench sets it)");
        }
        return Path.of(d);
    }

    /** The server's key and chain: rsa (RSA-2048) or ec (ECDSA P-256), from the default factory. */
    static KeyManagerFactory keys(String key) throws Exception {
        return keys(key, null);
    }

    /**
     * The same from p's own key manager factory where it has one (Conscrypt
     * does: a user who installs it first gets it), else the JDK's default.
     */
    static KeyManagerFactory keys(String key, Provider p) throws Exception {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(dir().resolve(key + ".p12"))) {
            ks.load(in, PASSWORD.toCharArray());
        }
        String alg = KeyManagerFactory.getDefaultAlgorithm();
        KeyManagerFactory kmf = p != null && p.getService("KeyManagerFactory", alg) != null
                ? KeyManagerFactory.getInstance(alg, p) : KeyManagerFactory.getInstance(alg);
        kmf.init(ks, PASSWORD.toCharArray());
        return kmf;
    }

    /** The client's trust: the bench CA alone, from the default factory. */
    static TrustManagerFactory trust() throws Exception {
        return trust(null);
    }

    /**
     * The same from p's own trust manager factory where it has one:
     * Conscrypt's engine hands a TLS 1.3 handshake's authType to the trust
     * manager as "GENERIC", which only its own accepts.
     */
    static TrustManagerFactory trust(Provider p) throws Exception {
        KeyStore ts = KeyStore.getInstance("PKCS12");
        ts.load(null, null);
        try (InputStream in = Files.newInputStream(dir().resolve("ca.pem"))) {
            ts.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        String alg = TrustManagerFactory.getDefaultAlgorithm();
        TrustManagerFactory tmf = p != null && p.getService("TrustManagerFactory", alg) != null
                ? TrustManagerFactory.getInstance(alg, p) : TrustManagerFactory.getInstance(alg);
        tmf.init(ts);
        return tmf;
    }

    static SSLContext server(Provider p, String protocol, String key) throws Exception {
        SSLContext c = SSLContext.getInstance(protocol, p);
        c.init(keys(key, p).getKeyManagers(), null, null);
        return c;
    }

    static SSLContext client(Provider p, String protocol) throws Exception {
        SSLContext c = SSLContext.getInstance(protocol, p);
        c.init(null, trust(p).getTrustManagers(), null);
        return c;
    }
}
