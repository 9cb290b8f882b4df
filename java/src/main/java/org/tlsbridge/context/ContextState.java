package org.tlsbridge.context;

import java.lang.ref.Reference;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntBinaryOperator;
import javax.net.ssl.SSLException;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509TrustManager;
import org.tlsbridge.engine.SessionContextImpl;
import org.tlsbridge.internal.Cleaners;
import org.tlsbridge.internal.Native;
import org.tlsbridge.internal.NativeConstants;
import org.tlsbridge.internal.RecordSealing;

/**
 * An initialised SSLContext: its SSL_CTX, managers and defaults. Written
 * once in init and only read afterwards, so engines on any thread share it
 * without locks. Each native SSL holds its own reference on the SSL_CTX, so
 * the SSL_CTX outlives this object as long as any engine needs it.
 */
public final class ContextState {
    /** Issuer lists larger than this are not sent in CertificateRequest. */
    private static final int MAX_CA_NAMES = 512;

    private final long ctx;
    private final String protocol;
    private final KeyBridge keys;
    private final TrustBridge trust;
    private final CipherSuites suites;
    private final String[] defaultSuites;
    /** The suites the SSL_CTX holds, which an engine enabling exactly these inherits without a parse. */
    private final String[] heldSuites;
    private final CipherSuites.Lists heldLists;
    private final String[] clientSuites;
    private final String[] serverSuites;
    private final String[] clientProtocols;
    private final String[] serverProtocols;
    private final SessionContextImpl clientSessions;
    private final SessionContextImpl serverSessions;
    /** The session-ticket key file, or null while the keys are random; set once it is read. */
    private volatile String ticketKeyFile;
    private final String[] namedGroups;

    /**
     * @param previous the state an earlier init made, or null: its session
     *     contexts and caches carry over, as SunJSSE's SSLContextImpl keeps
     *     its session contexts across init
     * @param held suites to set on the SSL_CTX in place of the defaults, or null
     */
    ContextState(String protocol, X509ExtendedKeyManager km, X509TrustManager tm, ContextState previous,
            String[] namedGroups, String[] held) throws SSLException {
        this.protocol = protocol;
        this.namedGroups = namedGroups;
        this.suites = CipherSuites.get();
        long c = Native.ctxNew();
        this.ctx = c;
        Cleaners.CLEANER.register(this, () -> Native.ctxFree(c));
        this.keys = new KeyBridge(km);
        this.trust = new TrustBridge(tm);
        this.defaultSuites = CipherSuites.compact(Native.ctxCipherNames(c));
        this.heldSuites = held == null ? defaultSuites : checkedSuites(held);
        this.heldLists = suites.lists(heldSuites);
        if (held != null) {
            // exactly the lists EngineConfig.apply would give each SSL, so an
            // engine inheriting them behaves as one that set them itself
            Native.ctxCiphers(c, heldLists.any12 ? heldLists.tls12 : null, heldLists.tls13);
        }
        this.clientSuites = customSuites("jdk.tls.client.cipherSuites");
        this.serverSuites = customSuites("jdk.tls.server.cipherSuites");
        this.clientProtocols = customProtocols("jdk.tls.client.protocols");
        this.serverProtocols = customProtocols("jdk.tls.server.protocols");
        IntBinaryOperator clientLimits = (size, timeout) -> {
            Native.ctxClientCache(c, size, timeout);
            Reference.reachabilityFence(this);
            return 0;
        };
        IntBinaryOperator serverLimits = (size, timeout) -> {
            Native.ctxSessionCache(c, size, timeout);
            Reference.reachabilityFence(this);
            return 0;
        };
        if (previous == null) {
            this.clientSessions = new SessionContextImpl(clientLimits);
            this.serverSessions = new SessionContextImpl(serverLimits);
        } else {
            try {
                Native.ctxShareSessions(c, previous.ctx);
            } finally {
                Reference.reachabilityFence(previous);
            }
            // the limits now reach the shared caches through this context, so
            // the previous one can be collected once its connections are gone
            this.clientSessions = previous.clientSessions.rebind(clientLimits);
            this.serverSessions = previous.serverSessions.rebind(serverLimits);
        }
        // invalidate(): the shared native store forgets the session's descendants
        java.util.function.Consumer<byte[]> forget = origin -> {
            Native.ctxForgetSession(c, origin);
            Reference.reachabilityFence(this);
        };
        clientSessions.forgetter(forget);
        serverSessions.forgetter(forget);
        serverSessions.ticketKeys(this::ticketKeys);
        Native.ctxClientCaNames(c, caNames(tm));
        if ("false".equalsIgnoreCase(System.getProperty("tlsbridge.sessionTickets", "true"))) {
            Native.ctxOptions(c, NativeConstants.SSL_OP_NO_TICKET, 0);
        }
        RecordSealing.logOnce();
        if ("false".equalsIgnoreCase(System.getProperty("tlsbridge.seal", "true"))) {
            // OpenSSL's own record layer seals again (docs/record-path.md)
            Native.ctxOptions(c, 0, NativeConstants.SSL_OP_ENABLE_KTLS);
        }
        String keyFile = System.getProperty("tlsbridge.ticketKeys");
        if (keyFile != null && !keyFile.isEmpty()) {
            try {
                ticketKeys(keyFile);
            } catch (SSLException e) {
                throw new SSLException("-Dtlsbridge.ticketKeys: " + e.getMessage()); // it names the file
            }
        } else if (previous != null && previous.ticketKeyFile != null) {
            // the keys came over with the session caches; the file is still watched
            ticketKeyFile = previous.ticketKeyFile;
            TicketKeyWatcher.watch(this);
        }
        String keylog = System.getProperty("tlsbridge.keylog", System.getenv("SSLKEYLOGFILE"));
        if (keylog != null && !keylog.isEmpty()) {
            Native.ctxKeylog(c, keylog);
            LOG.warning("tlsbridge is writing TLS secrets to " + keylog
                    + " (tlsbridge.keylog / SSLKEYLOGFILE): anyone who can read it can decrypt this traffic");
        }
    }

    private static final java.util.logging.Logger LOG = java.util.logging.Logger.getLogger("org.tlsbridge");

    private static byte[][] caNames(X509TrustManager tm) {
        X509Certificate[] issuers = tm.getAcceptedIssuers();
        if (issuers == null || issuers.length > MAX_CA_NAMES) {
            return new byte[0][];
        }
        List<byte[]> names = new ArrayList<>(issuers.length);
        for (X509Certificate c : issuers) {
            names.add(c.getSubjectX500Principal().getEncoded());
        }
        return names.toArray(new byte[0][]);
    }

    /**
     * Session-ticket keys from a file (docs/fleet.md) for handshakes from now
     * on, read again whenever it changes. A missing, short, malformed or
     * world-readable file throws and the keys in use stay.
     */
    public void ticketKeys(String path) throws SSLException {
        try {
            Native.ctxTicketKeys(ctx, path);
        } finally {
            Reference.reachabilityFence(this);
        }
        ticketKeyFile = path;
        TicketKeyWatcher.watch(this);
    }

    String ticketKeyFile() {
        return ticketKeyFile;
    }

    /** The SSL_CTX; callers keep this object reachable while they use it. */
    public long handle() {
        return ctx;
    }

    public String protocol() {
        return protocol;
    }

    public KeyBridge keys() {
        return keys;
    }

    public TrustBridge trust() {
        return trust;
    }

    public CipherSuites suites() {
        return suites;
    }

    public String[] defaultCipherSuites() {
        return defaultSuites.clone();
    }

    /**
     * A side's default suites: SunJSSE's jdk.tls.client.cipherSuites /
     * jdk.tls.server.cipherSuites when set (unsupported names are dropped, as
     * SunJSSE drops them), else OpenSSL's secure defaults.
     */
    public String[] defaultCipherSuites(boolean client) {
        String[] custom = client ? clientSuites : serverSuites;
        return custom != null ? custom.clone() : defaultSuites.clone();
    }

    private String[] customSuites(String property) {
        return suites.fromProperty(property);
    }

    private static String[] customProtocols(String property) {
        String v = System.getProperty(property);
        if (v == null || v.isBlank()) {
            return null;
        }
        try {
            String[] p = Protocols.check(unquote(v).split("\\s*,\\s*"));
            if (!Protocols.anyUsable(p)) {
                LOG.warning("ignoring " + property + "=" + v + ": names neither TLSv1.2 nor TLSv1.3");
                return null;
            }
            return p;
        } catch (IllegalArgumentException e) {
            LOG.warning("ignoring " + property + "=" + v + ": " + e.getMessage());
            return null;
        }
    }

    private static String unquote(String v) {
        String t = v.trim();
        return t.length() > 1 && t.startsWith("\"") && t.endsWith("\"") ? t.substring(1, t.length() - 1) : t;
    }

    private String[] checkedSuites(String[] held) throws SSLException {
        try {
            return suites.check(held);
        } catch (IllegalArgumentException e) {
            throw new SSLException(e.getMessage(), e);
        }
    }

    /** Whether an engine enabling these suites (same order) can use the SSL_CTX's lists. */
    public boolean holdsSuites(String[] enabled) {
        return java.util.Arrays.equals(enabled, heldSuites);
    }

    /** The SSL_CTX's lists, for the protocol range of an engine that holds them. */
    public CipherSuites.Lists heldLists() {
        return heldLists;
    }

    /** The context's own key-exchange groups (JSSE names), or null: engines then use jdk.tls.namedGroups. */
    public String[] namedGroups() {
        return namedGroups;
    }

    public String[] defaultProtocols(boolean client) {
        String[] custom = client ? clientProtocols : serverProtocols;
        if (custom != null) {
            return custom.clone();
        }
        if (client && Protocols.TLS12.equals(protocol)) {
            return new String[] {Protocols.TLS12};
        }
        return Protocols.supported();
    }

    public SessionContextImpl clientSessions() {
        return clientSessions;
    }

    public SessionContextImpl serverSessions() {
        return serverSessions;
    }
}
