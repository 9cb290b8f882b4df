package org.tlsbridge.engine;

import java.security.Principal;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.net.ssl.ExtendedSSLSession;
import javax.net.ssl.SNIServerName;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSessionBindingEvent;
import javax.net.ssl.SSLSessionBindingListener;
import javax.net.ssl.SSLSessionContext;
import org.tlsbridge.internal.NativeConstants;

/**
 * A session as JSSE reports it. The engine fills it in as the handshake
 * learns things (so trust managers see protocol and suite during the
 * handshake) and freezes it when the handshake finishes; it then outlives
 * the engine and its native state.
 */
public final class TlsBridgeSession extends ExtendedSSLSession {
    /** Any record OpenSSL accepts without compression (2^14 + 320 + 5, as SunJSSE's; tb.h). */
    public static final int PACKET_BUFFER_SIZE = NativeConstants.TB_MAX_RECORD;
    public static final int APPLICATION_BUFFER_SIZE = NativeConstants.TB_MAX_PLAINTEXT;

    /** What getSession reports before (or without) a completed handshake. */
    public static final TlsBridgeSession NULL_SESSION = new TlsBridgeSession(null, null, -1);

    private final SessionContextImpl context;
    private final String peerHost;
    private final int peerPort;
    private final long created = System.currentTimeMillis();
    private volatile long lastAccessed = created;
    private volatile boolean valid = true;
    volatile String protocol = "NONE";
    volatile String cipherSuite = "SSL_NULL_WITH_NULL_NULL";
    volatile byte[] id = new byte[0];
    volatile long creationTime = created;
    volatile X509Certificate[] peerCerts;
    volatile X509Certificate[] localCerts;
    private volatile SessionFacts peerSchemes;
    private volatile String[] peerSigAlgs;
    volatile List<SNIServerName> requestedServerNames = Collections.emptyList();
    /** The client's host_name bytes, a server's, until getRequestedServerNames makes the SNIHostName. */
    private volatile byte[] serverName;
    volatile List<byte[]> statusResponses = Collections.emptyList();
    volatile boolean resumed;
    /** The token of the full handshake this session comes from (session_cache.c), or null. */
    volatile byte[] origin;
    volatile String applicationProtocol;
    volatile String namedGroup;
    private final Map<String, Object> values = new HashMap<>();

    TlsBridgeSession(SessionContextImpl context, String peerHost, int peerPort) {
        this.context = context;
        this.peerHost = peerHost;
        this.peerPort = peerPort;
    }

    @Override
    public byte[] getId() {
        return id.clone();
    }

    @Override
    public SSLSessionContext getSessionContext() {
        return context;
    }

    @Override
    public long getCreationTime() {
        return creationTime;
    }

    @Override
    public long getLastAccessedTime() {
        return lastAccessed;
    }

    void touch() {
        lastAccessed = System.currentTimeMillis();
    }

    @Override
    public void invalidate() {
        valid = false;
        if (context != null) {
            context.remove(this);
        }
    }

    @Override
    public boolean isValid() {
        return valid && this != NULL_SESSION && (context == null || !context.expired(this));
    }

    @Override
    public void putValue(String name, Object value) {
        if (name == null || value == null) {
            throw new IllegalArgumentException("name and value must not be null");
        }
        Object old;
        synchronized (values) {
            old = values.put(name, value);
        }
        if (old instanceof SSLSessionBindingListener) {
            ((SSLSessionBindingListener) old).valueUnbound(new SSLSessionBindingEvent(this, name));
        }
        if (value instanceof SSLSessionBindingListener) {
            ((SSLSessionBindingListener) value).valueBound(new SSLSessionBindingEvent(this, name));
        }
    }

    @Override
    public Object getValue(String name) {
        if (name == null) {
            throw new IllegalArgumentException("name must not be null");
        }
        synchronized (values) {
            return values.get(name);
        }
    }

    @Override
    public void removeValue(String name) {
        if (name == null) {
            throw new IllegalArgumentException("name must not be null");
        }
        Object old;
        synchronized (values) {
            old = values.remove(name);
        }
        if (old instanceof SSLSessionBindingListener) {
            ((SSLSessionBindingListener) old).valueUnbound(new SSLSessionBindingEvent(this, name));
        }
    }

    @Override
    public String[] getValueNames() {
        synchronized (values) {
            return values.keySet().toArray(new String[0]);
        }
    }

    @Override
    public Certificate[] getPeerCertificates() throws SSLPeerUnverifiedException {
        X509Certificate[] c = peerCerts;
        if (c == null || c.length == 0) {
            throw new SSLPeerUnverifiedException("peer not authenticated");
        }
        return c.clone();
    }

    @Override
    public Certificate[] getLocalCertificates() {
        X509Certificate[] c = localCerts;
        return c == null ? null : c.clone();
    }

    @SuppressWarnings({"deprecation", "removal"})
    @Override
    public javax.security.cert.X509Certificate[] getPeerCertificateChain() throws SSLPeerUnverifiedException {
        throw new UnsupportedOperationException("javax.security.cert is deprecated; use getPeerCertificates");
    }

    @Override
    public Principal getPeerPrincipal() throws SSLPeerUnverifiedException {
        return ((X509Certificate) getPeerCertificates()[0]).getSubjectX500Principal();
    }

    @Override
    public Principal getLocalPrincipal() {
        X509Certificate[] c = localCerts;
        return c == null || c.length == 0 ? null : c[0].getSubjectX500Principal();
    }

    @Override
    public String getCipherSuite() {
        return cipherSuite;
    }

    @Override
    public String getProtocol() {
        return protocol;
    }

    @Override
    public String getPeerHost() {
        return peerHost;
    }

    @Override
    public int getPeerPort() {
        return peerPort;
    }

    @Override
    public int getPacketBufferSize() {
        return PACKET_BUFFER_SIZE;
    }

    @Override
    public int getApplicationBufferSize() {
        return APPLICATION_BUFFER_SIZE;
    }

    @Override
    public String[] getLocalSupportedSignatureAlgorithms() {
        return SignatureSchemes.localJavaNames();
    }

    /** Where the peer's scheme code points are; their JSSE names are made when asked for. */
    void peerSchemes(SessionFacts facts) {
        peerSchemes = facts;
        peerSigAlgs = null;
    }

    @Override
    public String[] getPeerSupportedSignatureAlgorithms() {
        String[] n = peerSigAlgs;
        if (n == null) {
            SessionFacts f = peerSchemes;
            n = f == null ? new String[0] : SignatureSchemes.names(f.schemes());
            peerSigAlgs = n;
        }
        return n.clone();
    }

    /** A server's: the host_name the ClientHello carried, or null. */
    void serverName(byte[] sni) {
        serverName = sni;
    }

    @Override
    public List<SNIServerName> getRequestedServerNames() {
        List<SNIServerName> l = requestedServerNames;
        byte[] sni = serverName;
        if (l.isEmpty() && sni != null) {
            l = Handshaker.hostNames(sni);
            requestedServerNames = l;
            serverName = null;
        }
        return l;
    }

    @Override
    public List<byte[]> getStatusResponses() {
        return statusResponses;
    }

    /** Whether this session was resumed rather than negotiated in full. */
    public boolean isResumed() {
        return resumed;
    }

    /**
     * The key-exchange group of the handshake that made this session (JSSE
     * name: "X25519MLKEM768", "x25519", "secp256r1", ...), or null: before
     * the server's hello, after a resumed TLS 1.2 handshake (it exchanges no
     * key), or under a TLS 1.2 suite without ECDHE.
     */
    public String namedGroup() {
        return namedGroup;
    }

    /** ALPN's result: null before the handshake ends, "" when none was negotiated. */
    public String applicationProtocol() {
        return applicationProtocol;
    }

    @Override
    public String toString() {
        return "TlsBridgeSession[" + protocol + ", " + cipherSuite + ", " + peerHost + ":" + peerPort + "]";
    }
}
