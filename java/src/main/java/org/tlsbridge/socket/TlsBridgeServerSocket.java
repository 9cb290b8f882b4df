package org.tlsbridge.socket;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketException;
import java.net.SocketOption;
import java.nio.channels.ServerSocketChannel;
import java.util.Set;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLServerSocket;
import org.tlsbridge.context.ContextState;
import org.tlsbridge.context.Protocols;
import org.tlsbridge.engine.EngineConfig;

/**
 * A listening socket owned by libtlsbridge. accept() waits in native poll()
 * (honouring SO_TIMEOUT; close() from another thread wakes it) and returns a
 * {@link TlsBridgeSocket} in server mode with this socket's settings; its
 * handshake runs on first I/O or startHandshake(), on the caller's thread.
 */
public final class TlsBridgeServerSocket extends SSLServerSocket {
    private final ContextState ctx;
    private final EngineConfig cfg;
    private final Object stateLock = new Object();
    private volatile NativeSocket ns;
    private volatile boolean closed;
    private volatile InetSocketAddress local;
    private volatile int soTimeout;
    private boolean reuse = true; // java.net's default for server sockets on Linux

    TlsBridgeServerSocket(ContextState ctx) throws IOException {
        this.ctx = ctx;
        this.cfg = new EngineConfig(ctx, null, false, true);
    }

    private NativeSocket socket(InetAddress forAddress) throws IOException {
        synchronized (stateLock) {
            if (closed) {
                throw new SocketException("Socket is closed");
            }
            NativeSocket s = ns;
            if (s == null) {
                s = NativeSocket.forAddress(forAddress);
                ns = s;
            }
            return s;
        }
    }

    @Override
    public void bind(SocketAddress endpoint) throws IOException {
        bind(endpoint, 50);
    }

    @Override
    public void bind(SocketAddress endpoint, int backlog) throws IOException {
        if (endpoint != null && !(endpoint instanceof InetSocketAddress)) {
            throw new IllegalArgumentException("Unsupported address type");
        }
        InetSocketAddress a = endpoint == null ? new InetSocketAddress(0) : (InetSocketAddress) endpoint;
        if (a.isUnresolved()) {
            throw new SocketException("Unresolved address");
        }
        if (local != null) {
            throw new SocketException("Already bound");
        }
        NativeSocket s = socket(a.getAddress());
        try {
            s.bind(a, reuse);
            s.listen(backlog < 1 ? 50 : backlog);
        } catch (IOException e) {
            close();
            throw e;
        }
        local = s.address(false);
    }

    @Override
    public Socket accept() throws IOException {
        if (closed) {
            throw new SocketException("Socket is closed");
        }
        NativeSocket s = ns;
        if (s == null || local == null) {
            throw new SocketException("Socket is not bound yet");
        }
        NativeSocket accepted;
        try {
            accepted = s.accept(soTimeout);
        } catch (SocketException e) {
            throw closed ? new SocketException("Socket closed") : e;
        }
        EngineConfig c;
        synchronized (cfg) {
            c = cfg.copy(null);
        }
        return new TlsBridgeSocket(ctx, c, accepted);
    }

    @Override
    public void close() {
        NativeSocket s;
        synchronized (stateLock) {
            if (closed) {
                return;
            }
            closed = true;
            s = ns;
        }
        if (s != null) {
            s.close(false);
        }
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    @Override
    public boolean isBound() {
        return local != null;
    }

    @Override
    public InetAddress getInetAddress() {
        InetSocketAddress l = local;
        return l == null ? null : l.getAddress();
    }

    @Override
    public int getLocalPort() {
        InetSocketAddress l = local;
        return l == null ? -1 : l.getPort();
    }

    @Override
    public SocketAddress getLocalSocketAddress() {
        return local;
    }

    @Override
    public ServerSocketChannel getChannel() {
        return null;
    }

    @Override
    public void setSoTimeout(int timeout) throws SocketException {
        if (closed) {
            throw new SocketException("Socket is closed");
        }
        if (timeout < 0) {
            throw new IllegalArgumentException("timeout < 0");
        }
        soTimeout = timeout;
    }

    @Override
    public int getSoTimeout() throws IOException {
        if (closed) {
            throw new SocketException("Socket is closed");
        }
        return soTimeout;
    }

    @Override
    public void setReuseAddress(boolean on) throws SocketException {
        if (closed) {
            throw new SocketException("Socket is closed");
        }
        synchronized (stateLock) {
            reuse = on;
        }
        if (ns != null) {
            option(NativeSocket.SO_REUSEADDR, on ? 1 : 0);
        }
    }

    @Override
    public boolean getReuseAddress() throws SocketException {
        if (closed) {
            throw new SocketException("Socket is closed");
        }
        return ns == null ? reuse : option(NativeSocket.SO_REUSEADDR, -1) != 0;
    }

    @Override
    public void setReceiveBufferSize(int size) throws SocketException {
        if (size <= 0) {
            throw new IllegalArgumentException("negative receive size");
        }
        option(NativeSocket.SO_RCVBUF, size);
    }

    @Override
    public int getReceiveBufferSize() throws SocketException {
        return option(NativeSocket.SO_RCVBUF, -1);
    }

    /** Sets an option when value >= 0, else reads it. */
    private int option(int opt, int value) throws SocketException {
        NativeSocket s;
        try {
            s = socket(null);
        } catch (SocketException e) {
            throw e;
        } catch (IOException e) {
            throw new SocketException(e.getMessage());
        }
        if (value >= 0) {
            s.setOption(opt, value);
            return value;
        }
        return s.option(opt);
    }

    @Override
    public <T> java.net.ServerSocket setOption(SocketOption<T> name, T value) throws IOException {
        SocketOptionsSupport.set(this, name, value);
        return this;
    }

    @Override
    public <T> T getOption(SocketOption<T> name) throws IOException {
        return SocketOptionsSupport.get(this, name);
    }

    @Override
    public Set<SocketOption<?>> supportedOptions() {
        return SocketOptionsSupport.SERVER;
    }

    // ---- settings for the sockets this one accepts ----

    @Override
    public String[] getEnabledCipherSuites() {
        return cfg.suites();
    }

    @Override
    public void setEnabledCipherSuites(String[] suites) {
        synchronized (cfg) {
            cfg.setSuites(suites);
        }
    }

    @Override
    public String[] getSupportedCipherSuites() {
        return ctx.suites().supported();
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
        synchronized (cfg) {
            cfg.setProtocols(protocols);
        }
    }

    @Override
    public void setNeedClientAuth(boolean need) {
        cfg.setClientAuth(need ? EngineConfig.AUTH_NEED : EngineConfig.AUTH_NONE);
    }

    @Override
    public boolean getNeedClientAuth() {
        return cfg.clientAuth() == EngineConfig.AUTH_NEED;
    }

    @Override
    public void setWantClientAuth(boolean want) {
        cfg.setClientAuth(want ? EngineConfig.AUTH_WANT : EngineConfig.AUTH_NONE);
    }

    @Override
    public boolean getWantClientAuth() {
        return cfg.clientAuth() == EngineConfig.AUTH_WANT;
    }

    @Override
    public void setUseClientMode(boolean mode) {
        synchronized (cfg) {
            cfg.setClientMode(mode);
        }
    }

    @Override
    public boolean getUseClientMode() {
        return cfg.clientMode();
    }

    @Override
    public void setEnableSessionCreation(boolean flag) {
        cfg.setSessionCreation(flag);
    }

    @Override
    public boolean getEnableSessionCreation() {
        return cfg.sessionCreation();
    }

    @Override
    public SSLParameters getSSLParameters() {
        synchronized (cfg) {
            return cfg.parameters();
        }
    }

    @Override
    public void setSSLParameters(SSLParameters params) {
        synchronized (cfg) {
            cfg.setParameters(params);
        }
    }

    @Override
    public String toString() {
        return "TlsBridgeServerSocket[" + (local == null ? "unbound" : local) + (closed ? ", closed" : "") + "]";
    }
}
