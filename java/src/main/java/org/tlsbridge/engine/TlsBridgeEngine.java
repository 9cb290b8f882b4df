package org.tlsbridge.engine;

import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.SSLEngineResult.Status;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSession;
import org.tlsbridge.context.ContextState;
import org.tlsbridge.internal.Cleaners;
import org.tlsbridge.internal.Native;
import org.tlsbridge.internal.NativeCallbacks;
import org.tlsbridge.internal.Results;

/**
 * SSLEngine over an OpenSSL SSL whose BIO reads and writes the caller's
 * buffers in place. One native call per wrap or unwrap; with direct buffers
 * (or heap arrays, which are pinned) nothing is copied but by OpenSSL
 * itself, and identical results are reused so steady traffic allocates
 * nothing.
 *
 * <p>All native access happens under one lock, so a close racing with I/O
 * on another thread waits for it instead of freeing under it; the native
 * SSL is freed as soon as both directions are closed (outbound alone for an
 * integration that asked, {@link #freeWhenOutboundDone()}), or by a Cleaner
 * if the engine is dropped.
 */
public final class TlsBridgeEngine extends EngineSettings implements NativeOwner {
    private static final SSLEngineResult CLOSED_EMPTY =
            new SSLEngineResult(Status.CLOSED, HandshakeStatus.NOT_HANDSHAKING, 0, 0);

    private final java.net.Socket socket;
    private final Handle handle = new Handle();
    private final Cleaner.Cleanable cleanable;
    private final Callbacks callbacks = new Callbacks(this);
    private final Results.Cache wrapResults = new Results.Cache();
    private final Results.Cache unwrapResults = new Results.Cache();
    private final RecordPath records = new RecordPath();
    private Handshaker handshaker;
    private volatile TlsBridgeSession session = TlsBridgeSession.NULL_SESSION;
    private volatile boolean freed;
    private volatile boolean inboundDone;
    private volatile boolean outboundDone;
    private boolean taskOut;
    /**
     * The last wrap or unwrap said an unwrap of no bytes would answer
     * {@link Results#UNDERFLOW_EMPTY} and change nothing (tb_result.idle_in),
     * and no native call has happened since: such an unwrap is answered here,
     * without crossing JNI. Tomcat makes one per request, after the read
     * that finds the connection drained. Lock held.
     */
    private boolean idleIn;
    /** See {@link #freeWhenOutboundDone()}. */
    private volatile boolean freeWhenOutboundDone;

    /** Owns the native pointer; also the Cleaner's action, so it must not reference the engine. */
    private static final class Handle implements Runnable {
        volatile long ptr;

        @Override
        public void run() {
            long p = ptr;
            ptr = 0;
            if (p != 0) {
                Native.engineFree(p);
            }
        }
    }

    /** The native side holds this weakly; it holds the engine strongly. */
    private static final class Callbacks extends NativeCallbacks {
        private final TlsBridgeEngine engine;

        Callbacks(TlsBridgeEngine engine) {
            this.engine = engine;
        }

        @Override
        protected int verifyPeer(byte[][] chainDer) {
            Handshaker h = engine.handshaker;
            return h == null ? Handshaker.X509_UNSPECIFIED : h.verifyClient(engine.handle.ptr, chainDer);
        }
    }

    public TlsBridgeEngine(ContextState ctx, String host, int port) {
        this(new EngineConfig(ctx, host, port, false, false), null, host, port);
    }

    /**
     * An engine inside an SSLSocket layered over another socket: the socket
     * owns the settings (shared, not copied) and is what trust and key
     * managers are shown, as SunJSSE shows them its layered sockets.
     */
    public TlsBridgeEngine(EngineConfig cfg, java.net.Socket socket, String host, int port) {
        super(cfg, host, port);
        this.socket = socket;
        this.cleanable = Cleaners.CLEANER.register(this, handle);
    }

    // ---- native lifetime ----

    @Override
    public long acquire() {
        lock.lock();
        idleIn = false;
        return handle.ptr;
    }

    @Override
    public void release() {
        lock.unlock();
    }

    /** The SSL, created and configured on first use; 0 once freed. Lock held. */
    private long ssl() throws SSLException {
        long p = handle.ptr;
        if (p != 0 || freed) {
            return p;
        }
        if (!cfg.modeSet()) {
            throw new IllegalStateException("Client/Server mode has not yet been set.");
        }
        ContextState ctx = cfg.context();
        try {
            p = Native.engineNew(ctx.handle(), cfg.clientMode(), callbacks);
        } finally {
            Reference.reachabilityFence(ctx);
        }
        handle.ptr = p;
        try {
            cfg.apply(p);
        } catch (SSLException | RuntimeException e) {
            free();
            throw e;
        }
        handshaker = new Handshaker(this, cfg, socket == null ? this : null, socket, getPeerHost(), getPeerPort());
        started = true;
        return p;
    }

    private void free() {
        idleIn = false;
        freed = true;
        inboundDone = true;
        outboundDone = true;
        cleanable.clean();
    }

    /**
     * For an integration whose caller drops the engine as soon as its
     * close_notify is out and never unwraps after closing outbound (Tomcat's
     * secure channels close the socket right after that wrap): the SSL is
     * then freed at once, on the caller's thread, where OpenSSL's memory is
     * reused hot by the next connection, instead of after a GC by the Cleaner
     * thread. From then on the engine reads nothing more: unwrap answers
     * CLOSED and {@link #isInboundDone()} is true. Without this call a
     * closed outbound leaves inbound readable, as SunJSSE's does.
     */
    public void freeWhenOutboundDone() {
        freeWhenOutboundDone = true;
    }

    /**
     * For an integration whose server speaks only after the client's first
     * data (HTTP) and whose caller, after a handshake wrap, flushes at once
     * only when the status is NEED_UNWRAP (Tomcat's secure channels; any
     * other status sends them back to the poller for OP_WRITE first). A TLS
     * 1.2 server's full handshake then reports NEED_UNWRAP after the wrap of
     * its last flight (ticket, ChangeCipherSpec, Finished) and FINISHED from
     * the next unwrap, which reads nothing if no record is there. Call before
     * the handshake starts; no effect on a client or on TLS 1.3.
     */
    public void clientSpeaksFirst() {
        lock.lock();
        try {
            cfg.clientSpeaksFirst = true;
        } finally {
            lock.unlock();
        }
    }

    /** After a CLOSED result: release native memory once both directions are done. */
    private void afterClosed(long p) {
        int st = Native.state(p);
        if ((Results.stateInboundDone(st) || freeWhenOutboundDone) && Results.stateOutboundDone(st)) {
            free();
        }
    }

    private SSLException withCause(SSLException e) {
        Handshaker h = handshaker;
        Throwable c = h == null ? null : h.cause();
        if (c != null && e.getCause() == null && c != e) {
            e.initCause(c);
        }
        return e;
    }

    // ---- wrap / unwrap ----

    // The single-buffer forms are overridden because SSLEngine's defaults
    // allocate a one-element array per call.
    @Override
    public SSLEngineResult wrap(ByteBuffer src, ByteBuffer dst) throws SSLException {
        if (src == null) {
            throw new IllegalArgumentException("src is null");
        }
        return doWrap(src, null, 0, 1, dst);
    }

    @Override
    public SSLEngineResult wrap(ByteBuffer[] srcs, int offset, int length, ByteBuffer dst) throws SSLException {
        RecordPath.checkArray(srcs, offset, length);
        return doWrap(null, srcs, offset, length, dst);
    }

    private SSLEngineResult doWrap(ByteBuffer single, ByteBuffer[] srcs, int offset, int length, ByteBuffer dst)
            throws SSLException {
        if (dst == null) {
            throw new IllegalArgumentException("dst is null");
        }
        if (dst.isReadOnly()) {
            throw new ReadOnlyBufferException();
        }
        lock.lock();
        try {
            long p = ssl();
            if (p == 0) {
                return CLOSED_EMPTY;
            }
            long r;
            idleIn = false;
            try {
                r = records.wrap(p, single, srcs, offset, length, dst);
            } catch (SSLException e) {
                throw withCause(e);
            }
            idleIn = Results.idleIn(r);
            return result(wrapResults, p, r);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public SSLEngineResult unwrap(ByteBuffer src, ByteBuffer dst) throws SSLException {
        if (dst == null) {
            throw new IllegalArgumentException("dst is null");
        }
        return doUnwrap(src, dst, null, 0, 1);
    }

    @Override
    public SSLEngineResult unwrap(ByteBuffer src, ByteBuffer[] dsts, int offset, int length) throws SSLException {
        RecordPath.checkArray(dsts, offset, length);
        return doUnwrap(src, null, dsts, offset, length);
    }

    private SSLEngineResult doUnwrap(ByteBuffer src, ByteBuffer single, ByteBuffer[] dsts, int offset, int length)
            throws SSLException {
        if (src == null) {
            throw new IllegalArgumentException("src is null");
        }
        for (int i = offset; i < offset + length; i++) {
            if ((single != null ? single : dsts[i]).isReadOnly()) {
                throw new ReadOnlyBufferException();
            }
        }
        lock.lock();
        try {
            if (idleIn && !src.hasRemaining()) {
                return Results.UNDERFLOW_EMPTY;
            }
            long p = ssl();
            if (p == 0) {
                return CLOSED_EMPTY;
            }
            long r;
            idleIn = false;
            try {
                r = records.unwrap(p, src, single, dsts, offset, length);
            } catch (SSLException e) {
                throw withCause(e);
            }
            idleIn = Results.idleIn(r);
            return result(unwrapResults, p, r);
        } finally {
            lock.unlock();
        }
    }

    private SSLEngineResult result(Results.Cache cache, long p, long r) {
        Status status = Results.status(r);
        HandshakeStatus hs = Results.handshake(r);
        if (hs == HandshakeStatus.FINISHED) {
            session = handshaker.finish(p);
        }
        SSLEngineResult res = cache.get(status, hs, Results.consumed(r), Results.produced(r));
        if (status == Status.CLOSED) {
            afterClosed(p);
        }
        return res;
    }

    // ---- handshake control ----

    @Override
    public Runnable getDelegatedTask() {
        lock.lock();
        try {
            long p = handle.ptr;
            if (p == 0 || taskOut || handshaker == null) {
                return null;
            }
            Runnable work = handshaker.task(Results.stateTask(Native.state(p)));
            if (work == null) {
                return null;
            }
            taskOut = true;
            return () -> {
                try {
                    work.run();
                } finally {
                    lock.lock();
                    try {
                        idleIn = false;
                        long q = handle.ptr;
                        if (q != 0) {
                            Native.taskDone(q);
                        }
                        taskOut = false;
                    } finally {
                        lock.unlock();
                    }
                }
            };
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void beginHandshake() throws SSLException {
        lock.lock();
        try {
            idleIn = false;
            if (freed || inboundDone || outboundDone) {
                throw new SSLException("engine is closed");
            }
            long p = ssl();
            if (!cfg.clientMode() && cfg.clientAuth() != EngineConfig.AUTH_NONE
                    && Results.stateHandshakeDone(Native.state(p)) && "TLSv1.3".equals(session.getProtocol())
                    && session.peerCerts == null) {
                // A server that wants a client certificate after the fact:
                // TLS 1.3 post-handshake authentication.
                Native.requestPostHandshakeAuth(p, cfg.clientAuth() == EngineConfig.AUTH_NEED);
                return;
            }
            Native.begin(p);
        } finally {
            lock.unlock();
        }
    }

    /** The packed native state (see Results), or -1 once the SSL is gone. */
    private int nativeState() {
        lock.lock();
        try {
            long p = handle.ptr;
            return p == 0 ? -1 : Native.state(p);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public HandshakeStatus getHandshakeStatus() {
        int st = nativeState();
        HandshakeStatus hs = st < 0 ? HandshakeStatus.NOT_HANDSHAKING : Results.stateHandshake(st);
        return hs == HandshakeStatus.FINISHED ? HandshakeStatus.NOT_HANDSHAKING : hs;
    }

    @Override
    public void closeInbound() throws SSLException {
        lock.lock();
        try {
            idleIn = false;
            long p = handle.ptr;
            if (p == 0) {
                inboundDone = true;
                return;
            }
            boolean truncated = Native.closeInbound(p) == 1;
            afterClosed(p);
            if (truncated) {
                throw new SSLException("closing inbound before receiving peer's close_notify");
            }
        } finally {
            lock.unlock();
        }
    }

    @Override
    public boolean isInboundDone() {
        int st = nativeState();
        return st < 0 ? inboundDone : Results.stateInboundDone(st);
    }

    @Override
    public void closeOutbound() {
        lock.lock();
        try {
            idleIn = false;
            long p = handle.ptr;
            if (p == 0) {
                outboundDone = true;
                if (!started) {
                    // never used: nothing to say to anyone
                    freed = true;
                    inboundDone = true;
                }
                return;
            }
            Native.closeOutbound(p);
            afterClosed(p);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public boolean isOutboundDone() {
        int st = nativeState();
        return st < 0 ? outboundDone : Results.stateOutboundDone(st);
    }

    // ---- sessions ----

    @Override
    public SSLSession getSession() {
        return session;
    }

    @Override
    public SSLSession getHandshakeSession() {
        lock.lock();
        try {
            long p = handle.ptr;
            if (p == 0 || handshaker == null) {
                return null;
            }
            int st = Native.state(p);
            if (Results.stateHandshakeDone(st) && !Results.statePostHandshakeAuth(st)) {
                return null;
            }
            return handshaker.session();
        } finally {
            lock.unlock();
        }
    }

    // ---- handshake-time views of the configuration ----

    @Override
    public String getApplicationProtocol() {
        return session.applicationProtocol();
    }

    @Override
    public String getHandshakeApplicationProtocol() {
        lock.lock();
        try {
            long p = handle.ptr;
            if (p == 0 || handshaker == null || Results.stateHandshakeDone(Native.state(p))) {
                return null;
            }
            return handshaker.handshakeApplicationProtocol(p);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public String toString() {
        return "TlsBridgeEngine[" + (cfg.clientMode() ? "client" : "server") + ", " + session + "]";
    }
}
