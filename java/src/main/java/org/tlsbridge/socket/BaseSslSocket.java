package org.tlsbridge.socket;

import java.io.IOException;
import java.net.SocketException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiFunction;
import javax.net.ssl.HandshakeCompletedEvent;
import javax.net.ssl.HandshakeCompletedListener;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSession;
import javax.net.ssl.SSLSocket;
import org.tlsbridge.context.Protocols;
import org.tlsbridge.engine.EngineConfig;
import org.tlsbridge.engine.TlsBridgeSession;

/**
 * What both tlsbridge SSLSockets share: the connection settings (one
 * {@link EngineConfig}, exactly as the engine keeps them) and the
 * handshake-completed listeners, and what a call on a socket whose
 * handshake failed throws. The I/O is the subclasses'.
 */
abstract class BaseSslSocket extends SSLSocket {
    private final List<HandshakeCompletedListener> listeners = new CopyOnWriteArrayList<>();
    private volatile BiFunction<SSLSocket, List<String>, String> alpnSelector;
    private volatile TlsBridgeSession completed;
    private volatile IOException failure;
    /** Guards cfg: a connecting client replaces it with a copy keyed by host:port. */
    protected final Object cfgLock = new Object();
    protected volatile EngineConfig cfg;

    BaseSslSocket(EngineConfig cfg) {
        this.cfg = cfg;
    }

    /** Whether the handshake has begun (settings are fixed from then on). */
    abstract boolean handshakeStarted();

    /**
     * The input stream's read of len > 0 bytes, the handshake first if it
     * has not run; -1 at the end of the stream.
     */
    abstract int readPlain(byte[] b, int off, int len) throws IOException;

    /** The output stream's write of len > 0 bytes, the handshake first if it has not run. */
    abstract void writePlain(byte[] b, int off, int len) throws IOException;

    /** Plaintext bytes a read returns without blocking. */
    abstract int availablePlain() throws IOException;

    private void beforeStart(String what) {
        if (handshakeStarted()) {
            throw new IllegalArgumentException("cannot change " + what + " after the handshake has started");
        }
    }

    // ---- after a failed handshake: what SunJSSE throws on each call ----

    /** Remembers why the handshake failed; the socket is closed by then. */
    void handshakeFailed(IOException e) {
        failure = e;
    }

    IOException handshakeFailure() {
        return failure;
    }

    /** read(): the failure again, as an SSLException (SunJSSE: "Connection has closed: ..."). */
    void checkReadable() throws SSLException {
        IOException f = failure;
        if (f != null) {
            throw new SSLException("Connection has closed: " + f, f);
        }
    }

    /** write(): a SocketException, as SunJSSE throws once the connection is broken. */
    void checkWritable() throws SocketException {
        if (failure != null) {
            throw (SocketException) new SocketException("Connection or outbound has closed").initCause(failure);
        }
    }

    /** startHandshake(): a SocketException, as SunJSSE throws on a broken or closed socket. */
    void checkStartable() throws SocketException {
        if (failure != null || isClosed()) {
            throw (SocketException) new SocketException("Socket has been closed or broken").initCause(failure);
        }
    }

    @Override
    public String[] getSupportedCipherSuites() {
        return cfg.context().suites().supported();
    }

    @Override
    public String[] getEnabledCipherSuites() {
        return cfg.suites();
    }

    @Override
    public void setEnabledCipherSuites(String[] suites) {
        synchronized (cfgLock) {
            cfg.setSuites(suites);
        }
    }

    @Override
    public String[] getSupportedProtocols() {
        return Protocols.supported();
    }

    @Override
    public String[] getEnabledProtocols() {
        return cfg.protocols();
    }

    @Override
    public void setEnabledProtocols(String[] protocols) {
        synchronized (cfgLock) {
            cfg.setProtocols(protocols);
        }
    }

    @Override
    public void setUseClientMode(boolean mode) {
        synchronized (cfgLock) {
            if (handshakeStarted() && mode != cfg.clientMode()) {
                throw new IllegalArgumentException("Cannot change mode after SSL traffic has started");
            }
            cfg.setClientMode(mode);
        }
    }

    @Override
    public boolean getUseClientMode() {
        return cfg.clientMode();
    }

    @Override
    public void setNeedClientAuth(boolean need) {
        synchronized (cfgLock) {
            cfg.setClientAuth(need ? EngineConfig.AUTH_NEED : EngineConfig.AUTH_NONE);
        }
    }

    @Override
    public boolean getNeedClientAuth() {
        return cfg.clientAuth() == EngineConfig.AUTH_NEED;
    }

    @Override
    public void setWantClientAuth(boolean want) {
        synchronized (cfgLock) {
            cfg.setClientAuth(want ? EngineConfig.AUTH_WANT : EngineConfig.AUTH_NONE);
        }
    }

    @Override
    public boolean getWantClientAuth() {
        return cfg.clientAuth() == EngineConfig.AUTH_WANT;
    }

    @Override
    public void setEnableSessionCreation(boolean flag) {
        synchronized (cfgLock) {
            cfg.setSessionCreation(flag);
        }
    }

    @Override
    public boolean getEnableSessionCreation() {
        return cfg.sessionCreation();
    }

    @Override
    public SSLParameters getSSLParameters() {
        synchronized (cfgLock) {
            return cfg.parameters();
        }
    }

    @Override
    public void setSSLParameters(SSLParameters params) {
        synchronized (cfgLock) {
            beforeStart("SSL parameters");
            cfg.setParameters(params);
        }
    }

    @Override
    public void addHandshakeCompletedListener(HandshakeCompletedListener l) {
        if (l == null) {
            throw new IllegalArgumentException("listener is null");
        }
        listeners.add(l);
    }

    @Override
    public void removeHandshakeCompletedListener(HandshakeCompletedListener l) {
        if (l == null) {
            throw new IllegalArgumentException("listener is null");
        }
        if (!listeners.remove(l)) {
            throw new IllegalArgumentException("listener not registered");
        }
    }

    /** Listeners run on a thread of their own, as SunJSSE runs them, so they may use the socket. */
    void handshakeCompleted(SSLSession session) {
        if (session instanceof TlsBridgeSession) {
            completed = (TlsBridgeSession) session;
        }
        if (listeners.isEmpty()) {
            return;
        }
        HandshakeCompletedEvent ev = new HandshakeCompletedEvent(this, session);
        List<HandshakeCompletedListener> snapshot = List.copyOf(listeners);
        Thread t = new Thread(() -> snapshot.forEach(l -> l.handshakeCompleted(ev)), "tlsbridge-handshake-completed");
        t.setDaemon(true);
        t.start();
    }

    /** ALPN's result once a handshake has completed: "" when none was negotiated; null before. */
    @Override
    public String getApplicationProtocol() {
        TlsBridgeSession s = completed;
        return s == null ? null : s.applicationProtocol();
    }

    @Override
    public String getHandshakeApplicationProtocol() {
        return null; // settled inside the handshake; readable through getApplicationProtocol() after it
    }

    @Override
    public void setHandshakeApplicationProtocolSelector(BiFunction<SSLSocket, List<String>, String> selector) {
        alpnSelector = selector;
        synchronized (cfgLock) {
            cfg.setSocketAlpnSelector(selector);
        }
    }

    @Override
    public BiFunction<SSLSocket, List<String>, String> getHandshakeApplicationProtocolSelector() {
        return alpnSelector;
    }

    // TCP urgent data cannot be carried inside TLS records (SunJSSE refuses them too).

    @Override
    public void sendUrgentData(int data) throws SocketException {
        throw new SocketException("This method is not supported by SSLSockets");
    }

    @Override
    public void setOOBInline(boolean on) throws SocketException {
        throw new SocketException("This method is not supported by SSLSockets");
    }

    @Override
    public boolean getOOBInline() throws SocketException {
        throw new SocketException("This method is not supported by SSLSockets");
    }
}
