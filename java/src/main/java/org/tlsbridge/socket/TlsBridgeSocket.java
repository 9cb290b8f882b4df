package org.tlsbridge.socket;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.ref.Reference;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.nio.channels.SocketChannel;
import java.util.concurrent.locks.ReentrantLock;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSession;
import org.tlsbridge.context.ContextState;
import org.tlsbridge.engine.EngineConfig;
import org.tlsbridge.engine.Handshaker;
import org.tlsbridge.engine.NativeOwner;
import org.tlsbridge.engine.TlsBridgeSession;
import org.tlsbridge.internal.NativeCallbacks;
import org.tlsbridge.internal.Results;

/**
 * An SSLSocket whose descriptor libtlsbridge owns from the start: created,
 * connected or accepted, read and written in C, with OpenSSL reading and
 * writing the descriptor itself. A read or write is one JNI call that
 * copies nothing but OpenSSL's own copy (the byte[] is pinned only around
 * each non-blocking OpenSSL call, never while waiting).
 *
 * <p>Threads: one reader and one writer may run at once, and any thread may
 * close; close wakes blocked accept, connect, handshake, read and write at
 * once. Blocking happens in native poll(), so a virtual thread blocked here
 * pins its carrier thread.
 */
public final class TlsBridgeSocket extends DescriptorOptionsSocket {
    private static final InetAddress ANY = new InetSocketAddress(0).getAddress();

    private final ContextState ctx;
    private final ReentrantLock handshakeLock = new ReentrantLock();
    private final ReentrantLock readLock = new ReentrantLock();
    private final ReentrantLock writeLock = new ReentrantLock();
    private final Object stateLock = new Object();
    private final Callbacks callbacks = new Callbacks(this);
    private final Owner owner = new Owner(this);
    private final InputStream in = new SslSocketStreams.In(this);
    private final OutputStream out = new SslSocketStreams.Out(this);
    private volatile NativeSocket ns;
    private volatile boolean connected;
    private volatile boolean closed;
    private volatile boolean inShut;
    private volatile boolean outShut;
    private volatile int soTimeout;
    private volatile InetSocketAddress local;
    private volatile InetSocketAddress remote;
    private String host;
    private long engine;
    private volatile Handshaker handshaker;
    private volatile boolean hsDone;
    private volatile TlsBridgeSession session = TlsBridgeSession.NULL_SESSION;

    /** An unconnected client socket. */
    TlsBridgeSocket(ContextState ctx) {
        super(new EngineConfig(ctx, null, true, true));
        this.ctx = ctx;
    }

    /** A client socket that will connect to host (the name goes to SNI and identity checks). */
    TlsBridgeSocket(ContextState ctx, String host) {
        super(new EngineConfig(ctx, host, true, true));
        this.ctx = ctx;
        this.host = host;
    }

    /** A server-side socket just accepted by {@link TlsBridgeServerSocket}. */
    TlsBridgeSocket(ContextState ctx, EngineConfig cfg, NativeSocket accepted) {
        super(cfg);
        this.ctx = ctx;
        this.ns = accepted;
        this.connected = true;
        this.local = accepted.address(false);
        this.remote = accepted.address(true);
    }

    /** The handshake's route back to the SSL: a reference, so close cannot free it meanwhile. */
    private static final class Owner implements NativeOwner {
        private final TlsBridgeSocket s;

        Owner(TlsBridgeSocket s) {
            this.s = s;
        }

        @Override
        public long acquire() {
            return s.ns.enter();
        }

        @Override
        public void release() {
            s.ns.leave();
        }
    }

    /** The server's client-certificate check, called from inside the native handshake. */
    private static final class Callbacks extends NativeCallbacks {
        private final TlsBridgeSocket s;

        Callbacks(TlsBridgeSocket s) {
            this.s = s;
        }

        @Override
        protected int verifyPeer(byte[][] chainDer) {
            Handshaker h = s.handshaker;
            return h == null ? Handshaker.X509_UNSPECIFIED : h.verifyClient(s.engine, chainDer);
        }
    }

    // ---- descriptor ----

    /** The native socket, created on first need with the family of the address about to be used. */
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

    private NativeSocket open() throws SocketException {
        NativeSocket s = ns;
        if (closed) {
            throw new SocketException("Socket is closed");
        }
        if (s == null || !connected) {
            throw new SocketException("Socket is not connected");
        }
        return s;
    }

    /** The descriptor number (for diagnostics and tests), -1 when there is none. */
    public int fd() {
        NativeSocket s = ns;
        return s == null || closed ? -1 : s.fd();
    }

    /** TLS counters: wire bytes in/out, plaintext in/out, records in/out, ns read/write/handshake. */
    public long[] stats() {
        NativeSocket s = ns;
        return s == null ? new long[9] : s.stats();
    }

    @Override
    public void connect(SocketAddress endpoint) throws IOException {
        connect(endpoint, 0);
    }

    @Override
    public void connect(SocketAddress endpoint, int timeout) throws IOException {
        if (!(endpoint instanceof InetSocketAddress)) {
            throw new IllegalArgumentException("unsupported address type");
        }
        if (timeout < 0) {
            throw new IllegalArgumentException("connect: timeout can't be negative");
        }
        InetSocketAddress a = (InetSocketAddress) endpoint;
        if (a.isUnresolved()) {
            throw new UnknownHostException(a.getHostName());
        }
        if (connected) {
            throw new SocketException("already connected");
        }
        NativeSocket s = socket(a.getAddress());
        try {
            s.connect(a, timeout);
        } catch (IOException | RuntimeException e) {
            close(); // java.net.Socket closes a socket whose connect failed
            throw e;
        }
        synchronized (stateLock) {
            if (host == null) {
                host = a.getHostString();
            }
            synchronized (cfgLock) {
                cfg = cfg.copy(host, a.getPort()); // host:port keys the client session cache
            }
            remote = a;
            local = s.address(false);
            connected = true;
        }
    }

    @Override
    public void bind(SocketAddress bindpoint) throws IOException {
        if (bindpoint != null && !(bindpoint instanceof InetSocketAddress)) {
            throw new IllegalArgumentException("unsupported address type");
        }
        InetSocketAddress a = (InetSocketAddress) bindpoint;
        if (a != null && a.isUnresolved()) {
            throw new SocketException("Unresolved address");
        }
        if (local != null) {
            throw new SocketException("Already bound");
        }
        NativeSocket s = socket(a == null ? null : a.getAddress());
        s.bind(a, false);
        local = s.address(false);
    }

    // ---- handshake ----

    @Override
    boolean handshakeStarted() {
        return handshaker != null;
    }

    @Override
    public void startHandshake() throws IOException {
        checkStartable();
        if (hsDone) {
            open().keyUpdate(); // TLS 1.3: KeyUpdate; 1.2: renegotiation is refused
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
            runHandshake();
        } finally {
            handshakeLock.unlock();
        }
        handshakeCompleted(session);
    }

    /** Handshake lock held. */
    private void runHandshake() throws IOException {
        try {
            NativeSocket s = open();
            if (handshaker == null) {
                begin(s);
            }
            int task;
            while ((task = s.handshake(soTimeout)) != 0) {
                answer(s, task);
            }
            long e = s.enter();
            try {
                if (e == 0) {
                    throw new SocketException("Socket closed");
                }
                session = handshaker.finish(e);
            } finally {
                s.leave();
            }
            hsDone = true;
        } catch (SocketTimeoutException e) {
            throw e; // nothing was lost: the handshake goes on with the next call
        } catch (IOException | RuntimeException e) {
            throw failed(e);
        }
    }

    /**
     * What OpenSSL parked the connection on (trust, or which certificate to
     * send, also when a TLS 1.3 server asks after the handshake), answered
     * on this thread.
     */
    private void answer(NativeSocket s, int task) {
        try {
            Runnable work = handshaker.task(task);
            if (work != null) {
                work.run();
            }
        } finally {
            s.taskDone();
        }
    }

    private void begin(NativeSocket s) throws IOException {
        EngineConfig c;
        synchronized (cfgLock) {
            c = cfg;
            long e = s.attach(ctx.handle(), c.clientMode(), callbacks);
            Reference.reachabilityFence(ctx);
            engine = e;
            handshaker = new Handshaker(owner, c, null, this, host,
                    remote == null ? -1 : remote.getPort());
        }
        long e = s.enter();
        try {
            if (e == 0) {
                throw new SocketException("Socket closed");
            }
            c.apply(e);
        } finally {
            s.leave();
        }
    }

    /** A handshake that cannot go on: remember why, close, and say why with the trust manager's cause. */
    private IOException failed(Exception e) {
        if (closed) {
            SocketException se = new SocketException("Socket closed");
            se.initCause(e);
            return se;
        }
        IOException io;
        if (e instanceof IOException) {
            io = (IOException) e;
        } else {
            io = new SSLException(e.getMessage(), e);
        }
        Handshaker h = handshaker;
        Throwable cause = h == null ? null : h.cause();
        if (cause != null && io.getCause() == null && cause != io) {
            io.initCause(cause);
        }
        handshakeFailed(io);
        closeQuietly(false);
        return io;
    }

    @Override
    public SSLSession getSession() {
        if (!hsDone && connected && !closed && handshakeFailure() == null) {
            try {
                handshake();
            } catch (IOException e) {
                return TlsBridgeSession.NULL_SESSION;
            }
        }
        return session;
    }

    @Override
    public SSLSession getHandshakeSession() {
        Handshaker h = handshaker;
        return h == null || hsDone ? null : h.session();
    }

    // ---- streams ----

    @Override
    public InputStream getInputStream() throws IOException {
        open();
        if (inShut) {
            throw new SocketException("Socket input is shutdown");
        }
        return in;
    }

    @Override
    public OutputStream getOutputStream() throws IOException {
        open();
        if (outShut) {
            throw new SocketException("Socket output is shutdown");
        }
        return out;
    }

    @Override
    int readPlain(byte[] b, int off, int len) throws IOException {
        handshake();
        readLock.lock();
        try {
            if (inShut) {
                return -1;
            }
            NativeSocket s = open();
            int n;
            int task;
            while ((task = NativeSocket.task(n = s.read(b, off, len, soTimeout))) != 0) {
                answer(s, task);
            }
            return n;
        } catch (SocketException e) {
            throw closed ? new SocketException("Socket closed") : e;
        } finally {
            readLock.unlock();
        }
    }

    @Override
    int availablePlain() throws IOException {
        NativeSocket s = open();
        return hsDone && !inShut ? s.available() : 0;
    }

    @Override
    void writePlain(byte[] b, int off, int len) throws IOException {
        handshake();
        writeLock.lock();
        try {
            if (outShut) {
                throw new SocketException("Socket output is shutdown");
            }
            open().write(b, off, len);
        } catch (SocketException e) {
            throw closed ? new SocketException("Socket closed") : e;
        } finally {
            writeLock.unlock();
        }
    }

    // ---- close and shutdown ----

    @Override
    public void close() throws IOException {
        closeQuietly(true);
    }

    private void closeQuietly(boolean closeNotify) {
        NativeSocket s;
        synchronized (stateLock) {
            if (closed) {
                return;
            }
            closed = true;
            s = ns;
        }
        if (s != null) {
            s.close(closeNotify && hsDone && !outShut);
        }
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    @Override
    public boolean isConnected() {
        return connected;
    }

    @Override
    public boolean isBound() {
        return local != null;
    }

    @Override
    public void shutdownInput() throws IOException {
        NativeSocket s = open();
        if (inShut) {
            throw new SocketException("Socket input is already shutdown");
        }
        inShut = true;
        s.shutdown(false);
    }

    @Override
    public void shutdownOutput() throws IOException {
        NativeSocket s = open();
        if (outShut) {
            throw new SocketException("Socket output is already shutdown");
        }
        writeLock.lock(); // close_notify must not cut into a record being written
        try {
            outShut = true;
            s.shutdown(true);
        } finally {
            writeLock.unlock();
        }
    }

    @Override
    public boolean isInputShutdown() {
        return inShut;
    }

    @Override
    public boolean isOutputShutdown() {
        return outShut;
    }

    // ---- addresses ----

    @Override
    public InetAddress getInetAddress() {
        InetSocketAddress r = remote;
        return connected && r != null ? r.getAddress() : null;
    }

    @Override
    public int getPort() {
        InetSocketAddress r = remote;
        return connected && r != null ? r.getPort() : 0;
    }

    @Override
    public SocketAddress getRemoteSocketAddress() {
        return connected ? remote : null;
    }

    @Override
    public InetAddress getLocalAddress() {
        InetSocketAddress l = local;
        return l == null || closed ? ANY : l.getAddress();
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
    public SocketChannel getChannel() {
        return null;
    }

    // ---- options ----

    @Override
    public void setSoTimeout(int timeout) throws SocketException {
        if (closed) {
            throw new SocketException("Socket is closed");
        }
        if (timeout < 0) {
            throw new IllegalArgumentException("timeout can't be negative");
        }
        soTimeout = timeout;
    }

    @Override
    public int getSoTimeout() throws SocketException {
        if (closed) {
            throw new SocketException("Socket is closed");
        }
        return soTimeout;
    }

    /** The descriptor for an option call: made now (dual-stack) if nothing has made it yet. */
    @Override
    NativeSocket forOption() throws SocketException {
        try {
            return socket(null);
        } catch (SocketException e) {
            throw e;
        } catch (IOException e) {
            throw new SocketException(e.getMessage());
        }
    }

    @Override
    public String toString() {
        return "TlsBridgeSocket[" + (cfg.clientMode() ? "client" : "server") + ", " + session + ", "
                + (remote == null ? "unconnected" : remote) + (closed ? ", closed" : "") + "]";
    }
}
