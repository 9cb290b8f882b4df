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

/**
 * What a connection is configured with, kept in Java until the handshake
 * starts and then pushed to the SSL in one call. Shared by the engine and
 * the sockets so both behave the same.
 */
public final class EngineConfig {
    public static final int AUTH_NONE = 0;
    public static final int AUTH_WANT = 1;
    public static final int AUTH_NEED = 2;

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
    BiFunction<SSLEngine, List<String>, String> alpnSelector;

    public EngineConfig(ContextState ctx, String peerHost, boolean clientMode, boolean modeSet) {
        this.ctx = ctx;
        this.peerHost = peerHost;
        this.clientMode = clientMode;
        this.modeSet = modeSet;
    }

    /** The same settings for another connection (a server socket's accepted sockets). */
    public EngineConfig copy(String host) {
        EngineConfig c = new EngineConfig(ctx, host, clientMode, modeSet);
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
        return suites == null ? ctx.defaultCipherSuites() : suites.clone();
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
        applicationProtocols = ap == null ? new String[0] : ap.clone();
        maximumPacketSize = p.getMaximumPacketSize();
    }

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
    String sniHost() {
        if (serverNames != null) {
            for (SNIServerName n : serverNames) {
                if (n instanceof SNIHostName) {
                    return ((SNIHostName) n).getAsciiName();
                }
            }
            return null;
        }
        SNIHostName d = defaultServerName();
        return d == null ? null : d.getAsciiName();
    }

    List<SNIServerName> requestedServerNames() {
        String h = sniHost();
        return h == null ? Collections.emptyList() : List.of(new SNIHostName(h));
    }

    /** Pushes everything to a fresh native SSL, in as few crossings as possible. */
    public void apply(long ssl) throws javax.net.ssl.SSLException {
        String[] s = suites == null || ctx.isDefaultSuites(suites) ? null : suites;
        CipherSuites.Lists lists = s == null ? null : ctx.suites().lists(s);
        boolean any12 = lists == null || lists.any12;
        boolean any13 = lists == null || lists.any13;
        int[] range = Protocols.range(protocols(), any12, any13);
        Native.configure(ssl, lists == null || !lists.any12 ? null : lists.tls12, lists == null ? null : lists.tls13,
                range[0], range[1], clientMode ? AUTH_NONE : clientAuth, !clientMode && cipherOrder);
        if (clientMode) {
            String sni = sniHost();
            if (sni != null) {
                Native.setServerName(ssl, sni);
            }
        }
    }
}
