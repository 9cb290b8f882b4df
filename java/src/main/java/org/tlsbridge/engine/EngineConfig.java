package org.tlsbridge.engine;

import java.security.AlgorithmConstraints;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.function.BiFunction;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SNIMatcher;
import javax.net.ssl.SNIServerName;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import org.tlsbridge.context.ContextState;
import org.tlsbridge.context.CipherSuites;
import org.tlsbridge.context.Protocols;
import org.tlsbridge.internal.Native;
import org.tlsbridge.internal.NativeConstants;

/**
 * What a connection is configured with, kept in Java until the handshake
 * starts and then pushed to the SSL in one call. Shared by the engine and
 * the sockets so both behave the same.
 */
public final class EngineConfig {
    public static final int AUTH_NONE = NativeConstants.TB_AUTH_NONE;
    public static final int AUTH_WANT = NativeConstants.TB_AUTH_WANT;
    public static final int AUTH_NEED = NativeConstants.TB_AUTH_NEED;

    private final ContextState ctx;
    private final String peerHost;
    boolean clientMode;
    boolean modeSet;
    String[] suites;
    String[] protocols;
    int clientAuth = AUTH_NONE;
    boolean sessionCreation = true;
    String identification;
    List<SNIServerName> serverNames;
    Collection<SNIMatcher> matchers;
    boolean cipherOrder = true;
    String[] applicationProtocols = new String[0];
    AlgorithmConstraints constraints;
    int maximumPacketSize;
    String[] namedGroups;
    BiFunction<SSLEngine, List<String>, String> alpnSelector;
    BiFunction<javax.net.ssl.SSLSocket, List<String>, String> socketAlpnSelector;
    /** Server: the caller unwraps the client's first data before it writes (TlsBridgeEngine.clientSpeaksFirst). */
    boolean clientSpeaksFirst;
    private final int peerPort;

    public EngineConfig(ContextState ctx, String peerHost, boolean clientMode, boolean modeSet) {
        this(ctx, peerHost, -1, clientMode, modeSet);
    }

    public EngineConfig(ContextState ctx, String peerHost, int peerPort, boolean clientMode, boolean modeSet) {
        this.ctx = ctx;
        this.peerHost = peerHost;
        this.peerPort = peerPort;
        this.clientMode = clientMode;
        this.modeSet = modeSet;
        NamedGroups.checkProperty();
    }

    /** The same settings for another connection (a server socket's accepted sockets). */
    public EngineConfig copy(String host) {
        return copy(host, peerPort);
    }

    /** The same settings for a connection to host:port (the client session cache's key). */
    public EngineConfig copy(String host, int port) {
        EngineConfig c = new EngineConfig(ctx, host, port, clientMode, modeSet);
        c.suites = suites;
        c.protocols = protocols;
        c.clientAuth = clientAuth;
        c.sessionCreation = sessionCreation;
        c.identification = identification;
        c.serverNames = serverNames;
        c.matchers = matchers;
        c.cipherOrder = cipherOrder;
        c.applicationProtocols = applicationProtocols;
        c.constraints = constraints;
        c.maximumPacketSize = maximumPacketSize;
        c.alpnSelector = alpnSelector;
        c.socketAlpnSelector = socketAlpnSelector;
        c.namedGroups = namedGroups;
        c.clientSpeaksFirst = clientSpeaksFirst;
        return c;
    }

    public ContextState context() {
        return ctx;
    }

    public boolean clientMode() {
        return clientMode;
    }

    public void setClientMode(boolean client) {
        clientMode = client;
        modeSet = true;
    }

    public boolean modeSet() {
        return modeSet;
    }

    public String[] suites() {
        return suites == null ? ctx.defaultCipherSuites(clientMode) : suites.clone();
    }

    public void setSuites(String[] names) {
        suites = ctx.suites().check(names);
    }

    public String[] protocols() {
        return protocols == null ? ctx.defaultProtocols(clientMode) : protocols.clone();
    }

    public void setProtocols(String[] names) {
        protocols = Protocols.check(names);
    }

    public int clientAuth() {
        return clientAuth;
    }

    public void setClientAuth(int mode) {
        clientAuth = mode;
    }

    public boolean sessionCreation() {
        return sessionCreation;
    }

    public void setSessionCreation(boolean on) {
        sessionCreation = on;
    }

    public String identification() {
        return identification;
    }

    public SSLParameters parameters() {
        SSLParameters p = new SSLParameters(suites(), protocols());
        if (clientAuth == AUTH_NEED) {
            p.setNeedClientAuth(true);
        } else if (clientAuth == AUTH_WANT) {
            p.setWantClientAuth(true);
        }
        p.setEndpointIdentificationAlgorithm(identification);
        p.setAlgorithmConstraints(constraints);
        if (serverNames != null) {
            p.setServerNames(serverNames);
        } else if (clientMode) {
            SNIHostName d = defaultServerName();
            p.setServerNames(d == null ? Collections.emptyList() : List.of(d));
        }
        if (matchers != null) {
            p.setSNIMatchers(matchers);
        }
        p.setUseCipherSuitesOrder(cipherOrder);
        p.setApplicationProtocols(applicationProtocols.clone());
        p.setMaximumPacketSize(maximumPacketSize);
        NamedGroups.into(p, namedGroups);
        return p;
    }

    public void setParameters(SSLParameters p) {
        if (p.getCipherSuites() != null) {
            setSuites(p.getCipherSuites());
        }
        if (p.getProtocols() != null) {
            setProtocols(p.getProtocols());
        }
        if (p.getNeedClientAuth()) {
            clientAuth = AUTH_NEED;
        } else if (p.getWantClientAuth()) {
            clientAuth = AUTH_WANT;
        } else {
            clientAuth = AUTH_NONE;
        }
        identification = p.getEndpointIdentificationAlgorithm();
        constraints = p.getAlgorithmConstraints();
        if (p.getServerNames() != null) {
            serverNames = new ArrayList<>(p.getServerNames());
        }
        if (p.getSNIMatchers() != null) {
            matchers = new ArrayList<>(p.getSNIMatchers());
        }
        cipherOrder = p.getUseCipherSuitesOrder();
        String[] ap = p.getApplicationProtocols();
        if (ap != null) {
            alpnWire(ap); // validates the names now, as SunJSSE does
        }
        applicationProtocols = ap == null ? new String[0] : ap.clone();
        maximumPacketSize = p.getMaximumPacketSize();
        String[] groups = NamedGroups.from(p);
        if (groups != null) {
            namedGroups = groups.clone();
        }
    }

    public String[] applicationProtocols() {
        return applicationProtocols.clone();
    }

    public void setSocketAlpnSelector(BiFunction<javax.net.ssl.SSLSocket, List<String>, String> selector) {
        socketAlpnSelector = selector;
    }

    public BiFunction<javax.net.ssl.SSLSocket, List<String>, String> socketAlpnSelector() {
        return socketAlpnSelector;
    }

    /** Whether a server must show the ClientHello to Java code (SNIMatchers, an ALPN selector). */
    boolean helloNeedsJava() {
        return !clientMode && ((matchers != null && !matchers.isEmpty()) || alpnSelector != null
                || socketAlpnSelector != null);
    }

    /** ALPN's wire format: each name as a length-prefixed byte string (ISO-8859-1, as JSSE encodes them). */
    static byte[] alpnWire(String[] protocols) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (String p : protocols) {
            byte[] b = p.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1);
            if (b.length == 0 || b.length > 255) {
                throw new IllegalArgumentException("invalid application protocol: '" + p + "'");
            }
            out.write(b.length);
            out.write(b, 0, b.length);
        }
        return out.toByteArray();
    }

    static List<String> alpnNames(byte[] wire) {
        List<String> out = new ArrayList<>();
        for (int i = 0; wire != null && i < wire.length;) {
            int n = wire[i] & 0xff;
            if (i + 1 + n > wire.length) {
                break;
            }
            out.add(new String(wire, i + 1, n, java.nio.charset.StandardCharsets.ISO_8859_1));
            i += 1 + n;
        }
        return out;
    }

    /** One protocol name from its bytes, or null. */
    static String alpnName(byte[] name) {
        return name == null ? null : new String(name, java.nio.charset.StandardCharsets.ISO_8859_1);
    }

    /** Peer bytes for a message: printable ASCII as is, anything else as \xNN. */
    static String hex(byte[] b) {
        StringBuilder s = new StringBuilder();
        for (byte x : b) {
            int c = x & 0xff;
            s.append(c > 0x20 && c < 0x7f && c != '\\' ? Character.toString(c) : String.format("\\x%02x", c));
        }
        return s.toString();
    }

    private static final boolean CLIENT_OCSP =
            !"false".equalsIgnoreCase(System.getProperty("jdk.tls.client.enableStatusRequestExtension", "true"));

    /** SunJSSE's rule: a dotted name that is not an IP literal becomes SNI. */
    SNIHostName defaultServerName() {
        String h = peerHost;
        if (h == null) {
            return null;
        }
        if (h.endsWith(".")) {
            h = h.substring(0, h.length() - 1);
        }
        if (h.indexOf('.') <= 0 || h.endsWith(".") || h.indexOf(':') >= 0 || h.matches("[0-9.]+")) {
            return null;
        }
        try {
            return new SNIHostName(h);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** The host name a client sends as SNI, if any. */
    private SNIHostName sniName() {
        if (serverNames != null) {
            for (SNIServerName n : serverNames) {
                if (n instanceof SNIHostName) {
                    return (SNIHostName) n;
                }
            }
            return null;
        }
        return defaultServerName();
    }

    /** The SNI host name in ASCII (an IDN as punycode), for identity checks and logs. */
    String sniHost() {
        SNIHostName n = sniName();
        return n == null ? null : n.getAsciiName();
    }

    List<SNIServerName> requestedServerNames() {
        SNIHostName n = sniName();
        return n == null ? Collections.emptyList() : List.of(n);
    }

    /**
     * The client cache's key: a session is offered only to the peer and identity it was made
     * with (SunJSSE also requires the same server names and endpoint identification).
     */
    private String sessionKey(SNIHostName sni) {
        return peerHost + ":" + peerPort + "\n" + (sni == null ? "" : sni.getAsciiName()) + "\n"
                + (identification == null ? "" : identification.toUpperCase(java.util.Locale.ROOT));
    }

    /** Pushes everything to a fresh native SSL, in as few crossings as possible. */
    public void apply(long ssl) throws javax.net.ssl.SSLException {
        String[] enabled = protocols();
        if (!Protocols.anyUsable(enabled)) {
            throw new javax.net.ssl.SSLHandshakeException(Protocols.refusal(enabled));
        }
        String[] chosen = suites();
        // the context's own lists (its defaults, or an integration's at init)
        // are inherited by the SSL: no list parse per connection
        boolean held = ctx.holdsSuites(chosen);
        CipherSuites.Lists lists = held ? ctx.heldLists() : ctx.suites().lists(chosen);
        int[] range = Protocols.range(enabled, lists.any12, lists.any13);
        Native.configure(ssl, held || !lists.any12 ? null : lists.tls12, held ? null : lists.tls13,
                range[0], range[1], clientMode ? AUTH_NONE : clientAuth, !clientMode && cipherOrder,
                KeyLimits.AES_GCM, KeyLimits.CHACHA20);
        if (clientMode) {
            SNIHostName sni = sniName();
            if (sni != null) {
                Native.setServerName(ssl, sni.getEncoded()); // the bytes, as SunJSSE sends them
            }
            if (peerHost != null && peerPort > 0) {
                Native.setPeer(ssl, sessionKey(sni));
            }
        }
        int flags = (helloNeedsJava() ? NativeConstants.TB_EXT_HELLO_TASK : 0)
                | (clientMode && CLIENT_OCSP ? NativeConstants.TB_EXT_OCSP : 0)
                | (!clientMode && clientSpeaksFirst ? NativeConstants.TB_EXT_CLIENT_FIRST : 0);
        byte[] alpn = applicationProtocols.length == 0 ? null : alpnWire(applicationProtocols);
        if (flags != 0 || alpn != null) {
            Native.configureExtensions(ssl, alpn, flags);
        }
        String[] groups = namedGroups != null ? namedGroups
                : ctx.namedGroups() != null ? ctx.namedGroups() : NamedGroups.fromProperty();
        if (groups != null) {
            String list = NamedGroups.toOpenSsl(groups);
            if (list == null) {
                // SunJSSE starts such a handshake with no key share and fails it; say why instead
                throw new javax.net.ssl.SSLHandshakeException("none of the named groups " + List.of(groups)
                        + " is one " + Native.openSslVersion() + " implements (it has "
                        + String.join(", ", NamedGroups.supported()) + ")");
            }
            Native.setGroups(ssl, list);
        }
    }

    /** The key-exchange group this connection negotiated (JSSE name), or null. */
}
