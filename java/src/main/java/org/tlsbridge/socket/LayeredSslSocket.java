package org.tlsbridge.socket;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLSession;
import org.tlsbridge.context.ContextState;
import org.tlsbridge.engine.EngineConfig;
import org.tlsbridge.engine.TlsBridgeEngine;
import org.tlsbridge.engine.TlsBridgeSession;

/**
 * TLS over a socket someone else owns (a proxy tunnel, a plain socket that
 * upgrades, a socket whose first bytes were already read): the tlsbridge
 * SSLEngine over that socket's streams. This path copies records through
 * Java buffers like every other engine-over-streams SSLSocket; only sockets
 * made by the factory's other methods get the native descriptor path.
 */
final class LayeredSslSocket extends BaseSslSocket {
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

    private final Socket base;
    private final boolean autoClose;
    private final TlsBridgeEngine engine;
    private final ReentrantLock handshakeLock = new ReentrantLock();
    private final ReentrantLock readLock = new ReentrantLock();
    private final ReentrantLock writeLock = new ReentrantLock();
    private final ByteBuffer netIn = ByteBuffer.allocate(TlsBridgeSession.PACKET_BUFFER_SIZE * 2);
    private final ByteBuffer netOut = ByteBuffer.allocate(TlsBridgeSession.PACKET_BUFFER_SIZE);
    private final ByteBuffer appIn = ByteBuffer.allocate(TlsBridgeSession.APPLICATION_BUFFER_SIZE).flip();
    private final InputStream in = new SslSocketStreams.In(this);
    private final OutputStream out = new SslSocketStreams.Out(this);
    private volatile boolean started;
    private volatile boolean hsDone;
    private volatile boolean closed;
    private boolean eof;

    /** Client over base, talking to host:port (SNI and identity checks use host). */
    LayeredSslSocket(ContextState ctx, Socket base, String host, int port, boolean autoClose) throws IOException {
        this(new EngineConfig(ctx, host, port, true, true), base, host, port, autoClose, null);
    }

    /** Server over base, whose first bytes (a ClientHello, in part or whole) were already read. */
    LayeredSslSocket(ContextState ctx, Socket base, InputStream consumed, boolean autoClose) throws IOException {
        this(new EngineConfig(ctx, null, false, true), base, null, base.getPort(), autoClose, consumed);
    }

    private LayeredSslSocket(EngineConfig cfg, Socket base, String host, int port, boolean autoClose,
            InputStream consumed) throws IOException {
        super(cfg);
        this.base = Objects.requireNonNull(base, "socket");
        this.autoClose = autoClose;
        this.engine = new TlsBridgeEngine(cfg, this, host, port);
        if (consumed != null) {
            byte[] first = consumed.readAllBytes();
            if (first.length > netIn.capacity()) {
                throw new SSLException("more consumed bytes than one TLS record");
            }
            netIn.put(first);
        }
    }

    @Override
    boolean handshakeStarted() {
        return started;
    }

    // ---- handshake ----

    @Override
    public void startHandshake() throws IOException {
        checkStartable();
        if (hsDone) {
            // TLS 1.3: a KeyUpdate, on the wire before this returns, as the native socket and SunJSSE do
            writeLock.lock();
            try {
                engine.beginHandshake();
                while (engine.getHandshakeStatus() == HandshakeStatus.NEED_WRAP
                        && wrapAndSend(EMPTY).bytesProduced() > 0) {
                    // the KeyUpdate
                }
            } finally {
                writeLock.unlock();
            }
            return;
        }
        handshake();
    }

    private void handshake() throws IOException {
        if (hsDone) {
            return;
        }
        handshakeLock.lock();
        try {
            if (hsDone) {
                return;
            }
            checkReadable(); // another thread's handshake failed while this one waited
            if (closed) {
                throw new SocketException("Socket is closed");
            }
            started = true;
            engine.beginHandshake();
            for (;;) {
                HandshakeStatus hs = engine.getHandshakeStatus();
                if (hs == HandshakeStatus.NEED_TASK) {
                    runTasks();
                } else if (hs == HandshakeStatus.NEED_WRAP) {
                    writeLock.lock();
                    try {
                        wrapAndSend(EMPTY);
                    } finally {
                        writeLock.unlock();
                    }
                } else if (hs == HandshakeStatus.NEED_UNWRAP) {
                    readLock.lock();
                    try {
                        if (!unwrapOnce()) {
                            throw new SSLHandshakeException("Remote host terminated the handshake");
                        }
                    } finally {
                        readLock.unlock();
                    }
                } else {
                    break;
                }
                if (engine.isInboundDone() && engine.isOutboundDone()) {
                    throw new SSLHandshakeException("the handshake was closed");
                }
            }
            hsDone = true;
        } catch (IOException e) {
            if (!(e instanceof java.net.SocketTimeoutException)) {
                handshakeFailed(e);
                closeQuietly();
            }
            throw e;
        } finally {
            handshakeLock.unlock();
        }
        handshakeCompleted(engine.getSession());
    }

    private void runTasks() {
        Runnable t;
        while ((t = engine.getDelegatedTask()) != null) {
            t.run();
        }
    }

    /** Wraps src (or a handshake flight) into records and writes them to the base socket. Write lock held. */
    private SSLEngineResult wrapAndSend(ByteBuffer src) throws IOException {
        netOut.clear();
        SSLEngineResult r = engine.wrap(src, netOut);
        netOut.flip();
        if (netOut.hasRemaining()) {
            OutputStream o = base.getOutputStream();
            o.write(netOut.array(), netOut.arrayOffset() + netOut.position(), netOut.remaining());
            o.flush();
        }
        return r;
    }

    /**
     * One unwrap, reading from the base socket first when a whole record is
     * not buffered. Leaves plaintext in appIn (read mode). Returns false at
     * the end of the base stream. Read lock held.
     */
    private boolean unwrapOnce() throws IOException {
        for (;;) {
            netIn.flip();
            appIn.compact();
            SSLEngineResult r;
            try {
                r = engine.unwrap(netIn, appIn);
            } finally {
                netIn.compact();
                appIn.flip();
            }
            switch (r.getStatus()) {
                case BUFFER_UNDERFLOW:
                    int n = base.getInputStream().read(netIn.array(), netIn.arrayOffset() + netIn.position(),
                            netIn.remaining());
                    if (n < 0) {
                        return false;
                    }
                    netIn.position(netIn.position() + n);
                    continue;
                case CLOSED:
                    eof = true;
                    return true;
                case BUFFER_OVERFLOW:
                    if (appIn.hasRemaining()) {
                        return true; // the caller drains appIn first
                    }
                    throw new SSLException("record larger than the application buffer");
                default:
                    if (hsDone) {
                        postHandshake(r.getHandshakeStatus());
                    }
                    return true;
            }
        }
    }

    /**
     * After the handshake the peer may still want an answer: a KeyUpdate, or
     * a TLS 1.3 CertificateRequest whose certificate task runs here (the
     * KeyManager chooses) before the reply goes out. Read lock held.
     */
    private void postHandshake(HandshakeStatus hs) throws IOException {
        if (hs == HandshakeStatus.NEED_TASK) {
            runTasks();
            hs = engine.getHandshakeStatus();
        }
        if (hs == HandshakeStatus.NEED_WRAP) {
            writeLock.lock();
            try {
                while (engine.getHandshakeStatus() == HandshakeStatus.NEED_WRAP
                        && wrapAndSend(EMPTY).bytesProduced() > 0) {
                    // the whole flight: Certificate, CertificateVerify, Finished
                }
            } finally {
                writeLock.unlock();
            }
        }
    }

    @Override
    public SSLSession getSession() {
        if (!hsDone && !closed) {
            try {
                handshake();
            } catch (IOException e) {
                return TlsBridgeSession.NULL_SESSION;
            }
        }
        return engine.getSession();
    }

    @Override
    public SSLSession getHandshakeSession() {
        return engine.getHandshakeSession();
    }

    // ---- streams ----

    @Override
    public InputStream getInputStream() throws IOException {
        if (closed) {
            throw new SocketException("Socket is closed");
        }
        return in;
    }

    @Override
    public OutputStream getOutputStream() throws IOException {
        if (closed) {
            throw new SocketException("Socket is closed");
        }
        return out;
    }

    @Override
    int readPlain(byte[] b, int off, int len) throws IOException {
        handshake();
        readLock.lock();
        try {
            while (!appIn.hasRemaining()) {
                if (eof || closed) {
                    return -1;
                }
                if (!unwrapOnce()) {
                    eof = true; // the peer closed without close_notify: end of stream, as SunJSSE
                }
            }
            int n = Math.min(len, appIn.remaining());
            appIn.get(b, off, n);
            return n;
        } finally {
            readLock.unlock();
        }
    }

    @Override
    int availablePlain() {
        return appIn.remaining();
    }

    @Override
    void writePlain(byte[] b, int off, int len) throws IOException {
        handshake();
        writeLock.lock();
        try {
            ByteBuffer src = ByteBuffer.wrap(b, off, len);
            while (src.hasRemaining()) {
                if (wrapAndSend(src).getStatus() == SSLEngineResult.Status.CLOSED) {
                    throw new SocketException("Socket output is closed");
                }
            }
        } finally {
            writeLock.unlock();
        }
    }

    // ---- close ----

    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        try {
            // a writer stuck on a peer that does not read must not hold close up
            if (hsDone && writeLock.tryLock()) {
                try {
                    engine.closeOutbound();
                    wrapAndSend(EMPTY);
                } finally {
                    writeLock.unlock();
                }
            } else {
                engine.closeOutbound();
            }
        } catch (IOException e) {
            // the peer is gone: nothing to tell it
        } finally {
            if (autoClose) {
                base.close();
            }
        }
    }

    private void closeQuietly() {
        try {
            close();
        } catch (IOException e) {
            // already failing
        }
    }

    @Override
    public boolean isClosed() {
        return closed || base.isClosed();
    }

    @Override
    public void shutdownInput() throws IOException {
        try {
            engine.closeInbound();
        } catch (SSLException e) {
            // no close_notify yet: this side stops reading regardless
        }
        base.shutdownInput();
    }

    @Override
    public void shutdownOutput() throws IOException {
        writeLock.lock();
        try {
            engine.closeOutbound();
            wrapAndSend(EMPTY);
        } finally {
            writeLock.unlock();
        }
        base.shutdownOutput();
    }

    @Override
    public boolean isInputShutdown() {
        return base.isInputShutdown();
    }

    @Override
    public boolean isOutputShutdown() {
        return base.isOutputShutdown();
    }

    // ---- everything else is the base socket's ----

    @Override
    public void connect(SocketAddress endpoint, int timeout) throws IOException {
        throw new SocketException("a layered socket is connected through its base socket");
    }

    @Override
    public void bind(SocketAddress bindpoint) throws IOException {
        throw new SocketException("a layered socket is bound through its base socket");
    }

    @Override
    public boolean isConnected() {
        return base.isConnected();
    }

    @Override
    public boolean isBound() {
        return base.isBound();
    }

    @Override
    public InetAddress getInetAddress() {
        return base.getInetAddress();
    }

    @Override
    public int getPort() {
        return base.getPort();
    }

    @Override
    public InetAddress getLocalAddress() {
        return base.getLocalAddress();
    }

    @Override
    public int getLocalPort() {
        return base.getLocalPort();
    }

    @Override
    public SocketAddress getRemoteSocketAddress() {
        return base.getRemoteSocketAddress();
    }

    @Override
    public SocketAddress getLocalSocketAddress() {
        return base.getLocalSocketAddress();
    }

    @Override
    public SocketChannel getChannel() {
        return null;
    }

    @Override
    public void setSoTimeout(int timeout) throws SocketException {
        base.setSoTimeout(timeout);
    }

    @Override
    public int getSoTimeout() throws SocketException {
        return base.getSoTimeout();
    }

    @Override
    public void setTcpNoDelay(boolean on) throws SocketException {
        base.setTcpNoDelay(on);
    }

    @Override
    public boolean getTcpNoDelay() throws SocketException {
        return base.getTcpNoDelay();
    }

    @Override
    public void setKeepAlive(boolean on) throws SocketException {
        base.setKeepAlive(on);
    }

    @Override
    public boolean getKeepAlive() throws SocketException {
        return base.getKeepAlive();
    }

    @Override
    public void setReuseAddress(boolean on) throws SocketException {
        base.setReuseAddress(on);
    }

    @Override
    public boolean getReuseAddress() throws SocketException {
        return base.getReuseAddress();
    }

    @Override
    public void setReceiveBufferSize(int size) throws SocketException {
        base.setReceiveBufferSize(size);
    }

    @Override
    public int getReceiveBufferSize() throws SocketException {
        return base.getReceiveBufferSize();
    }

    @Override
    public void setSendBufferSize(int size) throws SocketException {
        base.setSendBufferSize(size);
    }

    @Override
    public int getSendBufferSize() throws SocketException {
        return base.getSendBufferSize();
    }

    @Override
    public void setSoLinger(boolean on, int linger) throws SocketException {
        base.setSoLinger(on, linger);
    }

    @Override
    public int getSoLinger() throws SocketException {
        return base.getSoLinger();
    }

    @Override
    public void setTrafficClass(int tc) throws SocketException {
        base.setTrafficClass(tc);
    }

    @Override
    public int getTrafficClass() throws SocketException {
        return base.getTrafficClass();
    }

    @Override
    public String toString() {
        return "TlsBridgeLayeredSocket[" + engine + ", over " + base + "]";
    }
}
