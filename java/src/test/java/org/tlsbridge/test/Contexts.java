package org.tlsbridge.test;

import java.security.Provider;
import java.security.Security;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import org.tlsbridge.TlsBridgeProvider;

/** SSLContexts of either provider over the test PKI. */
public final class Contexts {
    public static final Provider TLSBRIDGE = new TlsBridgeProvider();

    private Contexts() {
    }

    public static Provider sun() {
        return Security.getProvider("SunJSSE");
    }

    public static SSLContext create(Provider p, String protocol, KeyManager[] km, TrustManager[] tm) {
        try {
            SSLContext c = SSLContext.getInstance(protocol, p);
            c.init(km, tm, null);
            return c;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    public static SSLContext server(Provider p, String... keys) {
        TestPki pki = TestPki.get();
        return create(p, "TLS", pki.keyManagers(keys), pki.trustManagers());
    }

    /**
     * A tlsbridge server context made while a system property that contexts
     * read at init (tlsbridge.sessionTickets, tlsbridge.seal) says value;
     * the property is cleared afterwards.
     */
    public static SSLContext serverWith(String property, String value, String... keys) {
        System.setProperty(property, value);
        try {
            return server(TLSBRIDGE, keys);
        } finally {
            System.clearProperty(property);
        }
    }

    public static SSLContext client(Provider p) {
        TestPki pki = TestPki.get();
        return create(p, "TLS", null, pki.trustManagers());
    }

    public static SSLContext clientWithCert(Provider p) {
        TestPki pki = TestPki.get();
        return create(p, "TLS", pki.keyManagers("client"), pki.trustManagers());
    }
}
