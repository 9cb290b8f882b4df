package org.tlsbridge.bench.jmh;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.Provider;
import java.security.Security;
import java.security.cert.CertificateFactory;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.tlsbridge.TlsBridgeProvider;

/**
 * Contexts over the certificates scripts/bench made (directory in
 * TB_BENCH_PKI: ca.pem, rsa.p12, ec.p12, password m1oZilla). An environment
 * variable rather than a system property because JMH forks inherit it as is.
 */
final class Pki {
    static final String PASSWORD = "m1oZilla";
    private static final Provider TLSBRIDGE = new TlsBridgeProvider();

    private Pki() {
    }

    static Path dir() {
        String d = System.getenv("TB_BENCH_PKI");
        if (d == null || d.isEmpty()) {
            throw new IllegalStateException("TB_BENCH_PKI is not set (scripts/bench sets it)");
        }
        return Path.of(d);
    }

    static Provider provider(String name) {
        switch (name) {
            case "TLSBridge":
                return TLSBRIDGE;
            case "SunJSSE":
                return Security.getProvider("SunJSSE");
            default:
                throw new IllegalArgumentException("unknown provider " + name);
        }
    }

    static SSLContext server(String provider, String key) throws Exception {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(dir().resolve(key + ".p12"))) {
            ks.load(in, PASSWORD.toCharArray());
        }
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, PASSWORD.toCharArray());
        SSLContext c = SSLContext.getInstance("TLS", provider(provider));
        c.init(kmf.getKeyManagers(), null, null);
        return c;
    }

    static SSLContext client(String provider) throws Exception {
        KeyStore ts = KeyStore.getInstance("PKCS12");
        ts.load(null, null);
        try (InputStream in = Files.newInputStream(dir().resolve("ca.pem"))) {
            ts.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(ts);
        SSLContext c = SSLContext.getInstance("TLS", provider(provider));
        c.init(null, tmf.getTrustManagers(), null);
        return c;
    }
}
