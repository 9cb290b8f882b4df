package org.tlsbridge.engine;

import java.io.ByteArrayInputStream;
import java.net.Socket;
import java.security.Principal;
import java.security.cert.CertificateException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateFactory;
import java.security.cert.CertificateNotYetValidException;
import java.security.cert.CertificateRevokedException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.security.auth.x500.X500Principal;
import org.tlsbridge.context.ContextState;
import org.tlsbridge.context.KeyBridge.KeyMaterial;
import org.tlsbridge.context.TrustBridge;
import org.tlsbridge.internal.Native;
import org.tlsbridge.internal.NativeConstants;
import org.tlsbridge.internal.Results;

/**
 * The Java half of one handshake: the answers OpenSSL parks the handshake
 * for (peer trust, which certificate to present) and the session it builds.
 * The engine and the native socket both drive one of these.
 */
public final class Handshaker {
    // X509_V_ERR_* codes choose the alert OpenSSL sends when we refuse a chain.
    public static final int X509_UNSPECIFIED = NativeConstants.X509_V_ERR_UNSPECIFIED;
    static final int X509_NOT_YET_VALID = NativeConstants.X509_V_ERR_CERT_NOT_YET_VALID;
    static final int X509_EXPIRED = NativeConstants.X509_V_ERR_CERT_HAS_EXPIRED;
    static final int X509_REVOKED = NativeConstants.X509_V_ERR_CERT_REVOKED;
    static final int X509_UNTRUSTED = NativeConstants.X509_V_ERR_CERT_UNTRUSTED;

    private static final ThreadLocal<CertificateFactory> FACTORY = ThreadLocal.withInitial(() -> {
        try {
            return CertificateFactory.getInstance("X.509");
        } catch (CertificateException e) {
            throw new IllegalStateException(e);
        }
    });

    private final NativeOwner owner;
    private final EngineConfig cfg;
    private final SSLEngine engine;
    private final Socket socket;
    private final TlsBridgeSession session;
    /** The handshake's FINISHED has been seen; later ones end post-handshake exchanges. Owner's lock. */
    private boolean finished;
    private final List<KeyMaterial> offered = new ArrayList<>(); // no array until a key is offered (never on resumption)
    private volatile Throwable cause;
    volatile String alpn;
    private static final int ALERT_ILLEGAL_PARAMETER = NativeConstants.SSL_AD_ILLEGAL_PARAMETER;
    private static final int ALERT_UNRECOGNIZED_NAME = NativeConstants.SSL_AD_UNRECOGNIZED_NAME;

    public Handshaker(NativeOwner owner, EngineConfig cfg, SSLEngine engine, Socket socket, String peerHost, int peerPort) {
        this.owner = owner;
        this.cfg = cfg;
        this.engine = engine;
        this.socket = socket;
        ContextState ctx = cfg.context();
        this.session = new TlsBridgeSession(cfg.clientMode() ? ctx.clientSessions() : ctx.serverSessions(),
                cfg.clientMode() || peerHost != null ? peerHost : serverSidePeerHost(socket), peerPort);
        if (cfg.clientMode()) {
            session.requestedServerNames = cfg.requestedServerNames();
        }
    }

    public TlsBridgeSession session() {
        return session;
    }

    /** The Java exception behind a refusal, to become the SSLException's cause. */
    public Throwable cause() {
        return cause;
    }

    /** A task for what the SSL is parked on, or null. Call with the owner's lock held. */
    public Runnable task(int kind) {
        switch (kind) {
            case Results.TASK_VERIFY:
                return this::verifyServerTask;
            case Results.TASK_CERT:
                return this::chooseCertificateTask;
            case Results.TASK_HELLO:
                return this::helloTask;
            default:
                return null;
        }
    }

    /**
     * Server: the ClientHello shown to the application's SNIMatchers and ALPN
     * selector before OpenSSL acts on it. Owner's lock held throughout (the
     * selector may ask the engine for its handshake session).
     */
    private void helloTask() {
        long ssl = owner.acquire();
        try {
            if (ssl == 0) {
                return;
            }
            byte[] sni = Native.helloServerName(ssl);
            javax.net.ssl.SNIHostName name = null;
            if (sni != null) {
                try {
                    name = new javax.net.ssl.SNIHostName(sni);
                } catch (IllegalArgumentException e) {
                    // SunJSSE's answer to a host_name it cannot parse
                    cause = new javax.net.ssl.SSLProtocolException("Illegal server name indication: "
                            + EngineConfig.hex(sni)).initCause(e);
                    Native.helloAnswer(ssl, null, false, ALERT_ILLEGAL_PARAMETER);
                    return;
                }
            }
            session.requestedServerNames = name == null ? List.of() : List.of(name);
            int alert = 0;
            if (name != null && cfg.matchers != null) {
                boolean any = false;
                boolean matched = false;
                for (javax.net.ssl.SNIMatcher m : cfg.matchers) {
                    if (m.getType() == javax.net.ssl.StandardConstants.SNI_HOST_NAME) {
                        any = true;
                        matched |= m.matches(name);
                    }
                }
                if (any && !matched) {
                    alert = ALERT_UNRECOGNIZED_NAME;
                    cause = new javax.net.ssl.SSLHandshakeException("Unrecognized server name indication: " + name);
                }
            }
            byte[] choice = null;
            boolean none = false;
            List<String> offered = EngineConfig.alpnNames(Native.helloAlpn(ssl));
            if (alert == 0 && !offered.isEmpty() && (cfg.alpnSelector != null || cfg.socketAlpnSelector != null)) {
                // a socket's own selector first (also for an engine inside a layered socket)
                String chosen = socket != null && cfg.socketAlpnSelector != null
                        ? cfg.socketAlpnSelector.apply((javax.net.ssl.SSLSocket) socket, offered)
                        : cfg.alpnSelector.apply(engine, offered);
                if (chosen == null || (!chosen.isEmpty() && !offered.contains(chosen))) {
                    none = true;
                    cause = new javax.net.ssl.SSLHandshakeException(
                            "No matching application protocol: the selector chose " + chosen + " from " + offered);
                } else {
                    choice = chosen.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1);
                    alpn = chosen;
                }
            }
            Native.helloAnswer(ssl, choice, none, alert);
        } catch (RuntimeException e) {
            cause = e;
            Native.helloAnswer(ssl, null, true, NativeConstants.SSL_AD_INTERNAL_ERROR);
        } finally {
            owner.release();
        }
    }

    /** The negotiated application protocol while the handshake runs (owner's lock held), or null. */
    String handshakeApplicationProtocol(long ssl) {
        String a = EngineConfig.alpnName(Native.alpnSelected(ssl));
        return a != null ? a : alpn;
    }

    /**
     * What OpenSSL has negotiated so far, for trust managers that look at the
     * session: one crossing; the peer's schemes and SNI are turned into JSSE
     * objects only when someone asks the session for them.
     */
    private SessionFacts learn(long ssl) {
        SessionFacts f = new SessionFacts(ssl);
        session.protocol = f.protocol();
        session.cipherSuite = f.cipherSuite();
        session.peerSchemes(f);
        session.namedGroup = f.namedGroup();
        if (!cfg.clientMode() && session.requestedServerNames.isEmpty()) {
            session.serverName(f.serverName());
        }
        return f;
    }

    /**
     * The client's host_name as SNIHostName(byte[]) reads it. The ClientHello
     * callback has already refused, with an alert, every name that
     * constructor rejects, so the catch only keeps a peer's bytes from ever
     * surfacing as an IllegalArgumentException.
     */
    static List<javax.net.ssl.SNIServerName> hostNames(byte[] sni) {
        if (sni == null) {
            return List.of();
        }
        try {
            return List.of(new javax.net.ssl.SNIHostName(sni));
        } catch (IllegalArgumentException e) {
            return List.of();
        }
    }

    static X509Certificate[] certificates(byte[][] der) throws CertificateException {
        CertificateFactory f = FACTORY.get();
        X509Certificate[] out = new X509Certificate[der.length];
        for (int i = 0; i < der.length; i++) {
            out[i] = (X509Certificate) f.generateCertificate(new ByteArrayInputStream(der[i]));
        }
        return out;
    }

    static int x509Error(Throwable t) {
        if (t instanceof CertificateExpiredException) {
            return X509_EXPIRED;
        }
        if (t instanceof CertificateNotYetValidException) {
            return X509_NOT_YET_VALID;
        }
        if (t instanceof CertificateRevokedException) {
            return X509_REVOKED;
        }
        return X509_UNTRUSTED;
    }

    /** Client: the server's chain, judged off the owner's lock (the TrustManager may be slow). */
    private void verifyServerTask() {
        byte[][] der;
        long ssl = owner.acquire();
        try {
            if (ssl == 0) {
                return;
            }
            der = Native.pendingChain(ssl);
            byte[] staple = learn(ssl).ocsp();
            session.statusResponses = staple == null ? List.of() : List.of(staple);
        } finally {
            owner.release();
        }
        boolean ok = false;
        int err = X509_UNSPECIFIED;
        try {
            if (der == null || der.length == 0) {
                throw new CertificateException("server sent no certificate");
            }
            X509Certificate[] chain = certificates(der);
            String authType = TrustBridge.serverAuthType(session.protocol, session.cipherSuite);
            cfg.context().trust().checkServer(chain, authType, engine, socket, cfg.identification(), host());
            session.peerCerts = chain;
            ok = true;
        } catch (Throwable t) {
            cause = t;
            err = x509Error(t);
        }
        ssl = owner.acquire();
        try {
            if (ssl != 0) {
                Native.verifyResult(ssl, ok, ok ? 0 : err);
            }
        } finally {
            owner.release();
        }
    }

    private String host() {
        String sni = cfg.sniHost();
        return sni != null ? sni : session.getPeerHost();
    }

    /** A server socket's session names its peer by address, as SunJSSE's does; an engine's by nothing. */
    private static String serverSidePeerHost(Socket socket) {
        java.net.InetAddress a = socket == null ? null : socket.getInetAddress();
        return a == null ? null : a.getHostAddress();
    }

    /** Server: the client's chain, synchronously from inside OpenSSL (owner's lock held). */
    public int verifyClient(long ssl, byte[][] der) {
        try {
            learn(ssl);
            X509Certificate[] chain = certificates(der);
            cfg.context().trust().checkClient(chain, TrustBridge.clientAuthType(chain[0]), engine, socket);
            session.peerCerts = chain;
            return 0;
        } catch (Throwable t) {
            cause = t;
            return x509Error(t);
        }
    }

    /** Which certificate to present: asked of the KeyManager on every handshake. */
    private void chooseCertificateTask() {
        long ssl = owner.acquire();
        try {
            if (ssl == 0) {
                return;
            }
            learn(ssl);
            X509ExtendedKeyManager km = cfg.context().keys().keyManager();
            if (km == null) {
                return;
            }
            if (cfg.clientMode()) {
                String alias = chooseClient(km, Native.clientCaNames(ssl));
                offer(ssl, alias);
            } else {
                List<String> aliases = new ArrayList<>(2);
                for (String type : serverKeyTypes(Native.peerSigAlgs(ssl))) {
                    String a = engine != null ? km.chooseEngineServerAlias(type, null, engine)
                            : km.chooseServerAlias(type, null, socket);
                    if (a != null && !aliases.contains(a)) {
                        aliases.add(a);
                    }
                }
                for (String a : preferNamed(km, aliases)) {
                    offer(ssl, a);
                }
            }
        } catch (Throwable t) {
            cause = t;
        } finally {
            owner.release();
        }
    }

    /**
     * When the client named a host and some of the chosen certificates are
     * for that name, only those are offered: OpenSSL picks among installed
     * certificates by signature algorithm alone and would otherwise serve
     * another host's EC certificate ahead of this host's RSA one.
     */
    private List<String> preferNamed(X509ExtendedKeyManager km, List<String> aliases) {
        if (aliases.size() < 2) {
            return aliases; // before the names: a single certificate needs no SNIHostName (IDN) per handshake
        }
        List<javax.net.ssl.SNIServerName> names = session.getRequestedServerNames();
        if (names.isEmpty() || !(names.get(0) instanceof javax.net.ssl.SNIHostName)) {
            return aliases;
        }
        String host = ((javax.net.ssl.SNIHostName) names.get(0)).getAsciiName();
        List<String> named = new ArrayList<>();
        for (String a : aliases) {
            X509Certificate[] chain = km.getCertificateChain(a);
            try {
                if (chain != null && chain.length > 0 && Native.checkHost(chain[0].getEncoded(), host, false) == 1) {
                    named.add(a);
                }
            } catch (java.security.cert.CertificateEncodingException e) {
                // not a candidate then
            }
        }
        return named.isEmpty() ? aliases : named;
    }

    private String chooseClient(X509ExtendedKeyManager km, byte[][] caNames) {
        Principal[] issuers = null;
        if (caNames != null && caNames.length > 0) {
            List<Principal> p = new ArrayList<>();
            for (byte[] n : caNames) {
                if (n != null) {
                    p.add(new X500Principal(n));
                }
            }
            issuers = p.toArray(new Principal[0]);
        }
        String[] types = {"EC", "RSA", "RSASSA-PSS", "EdDSA"};
        return engine != null ? km.chooseEngineClientAlias(types, issuers, engine)
                : km.chooseClientAlias(types, issuers, socket);
    }

    private void offer(long ssl, String alias) throws SSLException {
        KeyMaterial m = cfg.context().keys().material(alias);
        if (m != null) {
            m.useOn(ssl);
            offered.add(m);
        }
    }

    /** Key types the client's signature_algorithms allow, most common first. */
    static Set<String> serverKeyTypes(int[] sigalgs) {
        Set<String> types = new LinkedHashSet<>();
        if (sigalgs == null || sigalgs.length == 0) {
            types.add("RSA");
            types.add("EC");
            return types;
        }
        for (int code : sigalgs) {
            String t = SignatureSchemes.keyType(code);
            if (t != null) {
                types.add(t);
            }
        }
        return types;
    }

    /** Freezes the session once OpenSSL reports the handshake complete. Owner's lock held. */
    public TlsBridgeSession finish(long ssl) {
        TlsBridgeSession s = session;
        if (finished) {
            // a post-handshake exchange ended (a TLS 1.3 KeyUpdate, post-handshake client
            // authentication): the session stays as its handshake made it (a TLS 1.3 client's
            // SSL_SESSION is by now a ticket's, with another id); only a client certificate is new
            if (s.peerCerts == null && new SessionFacts(ssl).peerCertificate()) {
                s.peerCerts = peerChain(ssl);
            }
            return s;
        }
        finished = true;
        SessionFacts f = learn(ssl);
        s.id = f.id();
        long t = f.time();
        if (t > 0) {
            s.creationTime = t;
        }
        s.resumed = f.reused();
        java.nio.ByteBuffer origin = f.origin();
        if (origin != null) {
            byte[] token = new byte[origin.remaining()];
            origin.duplicate().get(token);
            s.origin = token;
        }
        SessionContextImpl sessions = (SessionContextImpl) s.getSessionContext();
        TlsBridgeSession first = s.resumed && origin != null ? sessions.origin(origin) : null;
        if (first != null) {
            s.peerCerts = first.peerCerts;
            s.localCerts = first.localCerts;
            s.creationTime = first.creationTime;
        } else if (s.peerCerts == null && f.peerCertificate()) {
            s.peerCerts = peerChain(ssl);
        }
        if (first == null) {
            s.localCerts = localChain(ssl, f.localKey());
        }
        if (!s.resumed && origin != null) {
            sessions.remember(origin, s);
        }
        byte[] staple = f.ocsp();
        if (staple != null) {
            s.statusResponses = List.of(staple);
        }
        String a = EngineConfig.alpnName(f.alpn());
        s.applicationProtocol = a == null ? "" : a;
        s.touch();
        if (cfg.sessionCreation()) {
            sessions.add(s);
        }
        return s;
    }

    private static X509Certificate[] peerChain(long ssl) {
        byte[][] der = Native.peerChain(ssl);
        if (der == null) {
            return null;
        }
        try {
            return certificates(der);
        } catch (CertificateException e) {
            return null;
        }
    }

    /** The chain we sent: the KeyManager's own certificates when OpenSSL used one we installed. */
    private X509Certificate[] localChain(long ssl, long used) {
        for (KeyMaterial m : offered) {
            if (m.is(used)) {
                return m.chain();
            }
        }
        byte[][] der = Native.localChain(ssl);
        if (der == null || der.length == 0) {
            return null;
        }
        try {
            return certificates(der);
        } catch (CertificateException e) {
            return null;
        }
    }
}
