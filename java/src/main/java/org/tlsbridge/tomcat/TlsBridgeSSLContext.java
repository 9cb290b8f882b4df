package org.tlsbridge.tomcat;

import java.lang.ref.Reference;
import java.security.KeyManagementException;
import java.security.Provider;
import java.security.SecureRandom;
import java.security.Security;
import java.security.cert.X509Certificate;
import java.util.LinkedHashSet;
import java.util.Set;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLServerSocketFactory;
import javax.net.ssl.SSLSessionContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509KeyManager;
import javax.net.ssl.X509TrustManager;
import org.apache.tomcat.util.net.SSLContext;
import org.tlsbridge.TlsBridgeProvider;
import org.tlsbridge.context.ContextState;
import org.tlsbridge.context.TlsBridgeContextSpi;
import org.tlsbridge.engine.TlsBridgeEngine;
import org.tlsbridge.internal.Native;
import org.tlsbridge.internal.NativeConstants;

/**
 * Tomcat's SSLContext over a tlsbridge {@code javax.net.ssl.SSLContext}.
 * The SPI is made here rather than through JCA so that context-wide OpenSSL
 * options Tomcat can ask for ({@code disableSessionTickets}) are set on the
 * SSL_CTX once, at configuration time, before any engine exists.
 */
final class TlsBridgeSSLContext implements SSLContext {
    static final long OP_NO_TICKET = NativeConstants.SSL_OP_NO_TICKET;

    private static volatile Provider provider;

    private final Spi spi;
    private final javax.net.ssl.SSLContext context;
    private final long options;
    private final String ticketKeys;
    private volatile KeyManager[] kms;
    private volatile TrustManager[] tms;

    /** Exposes the native context to this package; the JCA face stays untouched. */
    static final class Spi extends TlsBridgeContextSpi {
        Spi(String protocol) {
            super(protocol);
        }

        void ticketKeys(String path) throws SSLException {
            state().ticketKeys(path);
        }

        void groups(String[] names) {
            namedGroups(names);
        }

        void suites(String[] names) {
            heldSuites(names);
        }

        long options(long set, long clear) {
            ContextState s = state();
            try {
                return Native.ctxOptions(s.handle(), set, clear);
            } finally {
                Reference.reachabilityFence(s);
            }
        }
    }

    /**
     * @param ticketKeys the host's session-ticket key file, or null
     * @param namedGroups the host's groups, or null for the defaults
     * @param ciphers the host's suites, which Tomcat then enables on every
     *     engine: held by the SSL_CTX so that no connection parses them again
     */
    TlsBridgeSSLContext(String sslProtocol, long options, String ticketKeys, String[] namedGroups,
            String[] ciphers) {
        String protocol = contextProtocol(sslProtocol);
        this.spi = new Spi(protocol);
        spi.groups(namedGroups);
        spi.suites(ciphers);
        this.context = new javax.net.ssl.SSLContext(spi, provider(), protocol) {
        };
        this.options = options;
        this.ticketKeys = ticketKeys;
    }

    /** Tomcat's sslProtocol ("TLS" by default) to one of the provider's context algorithms. */
    static String contextProtocol(String sslProtocol) {
        if ("TLSv1.2".equals(sslProtocol) || "TLSv1.3".equals(sslProtocol)) {
            return sslProtocol;
        }
        return "TLS";
    }

    private static Provider provider() {
        Provider p = provider;
        if (p == null) {
            p = Security.getProvider(TlsBridgeProvider.NAME);
            if (!(p instanceof TlsBridgeProvider)) {
                p = new TlsBridgeProvider();
            }
            provider = p;
        }
        return p;
    }

    @Override
    public void init(KeyManager[] kms, TrustManager[] tms, SecureRandom sr) throws KeyManagementException {
        this.kms = kms;
        this.tms = tms;
        context.init(kms, tms, sr);
        if (options != 0) {
            spi.options(options, 0);
        }
        if (ticketKeys != null) {
            try {
                spi.ticketKeys(ticketKeys);
            } catch (SSLException e) {
                // the setting as server.xml spells it (the message names the file);
                // no cause, which would only say it again in the logged stack trace
                throw new KeyManagementException("<OpenSSLConfCmd name=\"" + TlsBridgeUtil.TICKET_KEYS_CMD
                        + "\">: " + e.getMessage());
            }
        }
    }

    /** The OpenSSL options now set on the SSL_CTX (for tests and diagnostics). */
    long currentOptions() {
        return spi.options(0, 0);
    }

    @Override
    public void destroy() {
        // The SSL_CTX is reference counted by every engine made from it and
        // freed by the provider's Cleaner once none is left; freeing it here
        // would race connections still being served during a reload.
    }

    @Override
    public SSLSessionContext getServerSessionContext() {
        return context.getServerSessionContext();
    }

    @Override
    public SSLEngine createSSLEngine() {
        SSLEngine e = context.createSSLEngine();
        if (e instanceof TlsBridgeEngine) {
            // Tomcat's channels close the socket right after wrapping their
            // close_notify and never unwrap again (they never call
            // closeInbound either): free the SSL then rather than after a GC.
            ((TlsBridgeEngine) e).freeWhenOutboundDone();
            // HTTP: the client speaks first; the channels flush a handshake
            // wrap at once only when it says NEED_UNWRAP (a TLS 1.2 server's
            // last flight otherwise costs a poller round trip for OP_WRITE).
            ((TlsBridgeEngine) e).clientSpeaksFirst();
        }
        return e;
    }

    @Override
    public SSLServerSocketFactory getServerSocketFactory() {
        return context.getServerSocketFactory();
    }

    @Override
    public SSLParameters getSupportedSSLParameters() {
        return context.getSupportedSSLParameters();
    }

    @Override
    public X509Certificate[] getCertificateChain(String alias) {
        KeyManager[] k = kms;
        if (k == null) {
            return null;
        }
        for (KeyManager km : k) {
            if (km instanceof X509KeyManager) {
                X509Certificate[] chain = ((X509KeyManager) km).getCertificateChain(alias);
                if (chain != null) {
                    return chain;
                }
            }
        }
        return null;
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
        Set<X509Certificate> out = new LinkedHashSet<>();
        TrustManager[] t = tms;
        if (t != null) {
            for (TrustManager tm : t) {
                if (tm instanceof X509TrustManager) {
                    for (X509Certificate c : ((X509TrustManager) tm).getAcceptedIssuers()) {
                        out.add(c);
                    }
                }
            }
        }
        return out.toArray(new X509Certificate[0]);
    }
}
