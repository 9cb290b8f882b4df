package org.tlsbridge.context;

import java.security.KeyManagementException;
import java.security.SecureRandom;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLServerSocketFactory;
import javax.net.ssl.SSLSessionContext;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManager;
import org.tlsbridge.engine.TlsBridgeEngine;
import org.tlsbridge.internal.NativeLibrary;

/**
 * SSLContext for the TLSBridge provider. The SecureRandom given to init is
 * not used: OpenSSL draws from its own DRBG, seeded by the kernel.
 */
public abstract class TlsBridgeContextSpi extends javax.net.ssl.SSLContextSpi {
    private final String protocol;
    private volatile ContextState state;
    private volatile String[] namedGroups;
    private volatile String[] heldSuites;

    protected TlsBridgeContextSpi(String protocol) {
        // Throwing here makes JCA fall through to the next provider when the
        // native library cannot load, so "provider first" never strands a JVM.
        NativeLibrary.ensureLoaded();
        this.protocol = protocol;
    }

    @Override
    protected void engineInit(KeyManager[] km, TrustManager[] tm, SecureRandom sr) throws KeyManagementException {
        try {
            state = new ContextState(protocol, Managers.keyManager(km), Managers.trustManager(tm), state, namedGroups,
                    heldSuites);
        } catch (SSLException e) {
            throw new KeyManagementException("cannot create the OpenSSL context: " + e.getMessage(), e);
        }
    }

    /**
     * Key-exchange groups (JSSE names) for the engines of the next init that
     * set none themselves, in place of jdk.tls.namedGroups: how an
     * integration passes its own setting (Tomcat's {@code groups}).
     */
    protected final void namedGroups(String[] groups) {
        namedGroups = groups == null ? null : groups.clone();
    }

    /**
     * Cipher suites (standard names, in preference order) the next init sets
     * on the SSL_CTX itself: an integration that gives every engine the same
     * list (Tomcat's {@code ciphers}) then costs no OpenSSL list parse per
     * connection. Engines keep their own enabled suites; null = the defaults.
     */
    protected final void heldSuites(String[] suites) {
        heldSuites = suites == null ? null : suites.clone();
    }

    protected final ContextState state() {
        ContextState s = state;
        if (s == null) {
            throw new IllegalStateException("SSLContext is not initialized");
        }
        return s;
    }

    @Override
    protected SSLSocketFactory engineGetSocketFactory() {
        return SocketSupport.socketFactory(state());
    }

    @Override
    protected SSLServerSocketFactory engineGetServerSocketFactory() {
        return SocketSupport.serverSocketFactory(state());
    }

    @Override
    protected SSLEngine engineCreateSSLEngine() {
        return new TlsBridgeEngine(state(), null, -1);
    }

    @Override
    protected SSLEngine engineCreateSSLEngine(String host, int port) {
        return new TlsBridgeEngine(state(), host, port);
    }

    @Override
    protected SSLSessionContext engineGetServerSessionContext() {
        return state().serverSessions();
    }

    @Override
    protected SSLSessionContext engineGetClientSessionContext() {
        return state().clientSessions();
    }

    @Override
    protected SSLParameters engineGetDefaultSSLParameters() {
        ContextState s = state();
        return new SSLParameters(s.defaultCipherSuites(true), s.defaultProtocols(true));
    }

    @Override
    protected SSLParameters engineGetSupportedSSLParameters() {
        ContextState s = state();
        SSLParameters p = new SSLParameters(s.suites().supported(), Protocols.supported());
        org.tlsbridge.engine.NamedGroups.into(p, org.tlsbridge.engine.NamedGroups.supported().toArray(new String[0]));
        return p;
    }

    /** SSLContext "TLS": TLS 1.2 and 1.3. */
    public static final class Tls extends TlsBridgeContextSpi {
        public Tls() {
            super("TLS");
        }
    }

    /** SSLContext "TLSv1.2": clients offer only 1.2, servers accept both. */
    public static final class Tls12 extends TlsBridgeContextSpi {
        public Tls12() {
            super(Protocols.TLS12);
        }
    }

    /** SSLContext "TLSv1.3". */
    public static final class Tls13 extends TlsBridgeContextSpi {
        public Tls13() {
            super(Protocols.TLS13);
        }
    }

    /** SSLContext "Default": initialised from the JDK's default managers. */
    public static final class Default extends TlsBridgeContextSpi {
        public Default() throws KeyManagementException {
            super("TLS");
            super.engineInit(Managers.defaultKeyManagers(), null, null);
        }

        @Override
        protected void engineInit(KeyManager[] km, TrustManager[] tm, SecureRandom sr)
                throws KeyManagementException {
            throw new KeyManagementException("Default SSLContext is initialized automatically");
        }
    }
}
