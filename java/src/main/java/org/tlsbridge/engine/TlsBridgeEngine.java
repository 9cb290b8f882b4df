package org.tlsbridge.engine;

import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiFunction;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.SSLEngineResult.Status;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
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
 * SSL is freed as soon as both directions are closed, or by a Cleaner if
 * the engine is dropped.
 */
public final class TlsBridgeEngine extends SSLEngine implements NativeOwner {
    private static final SSLEngineResult CLOSED_EMPTY =
            new SSLEngineResult(Status.CLOSED, HandshakeStatus.NOT_HANDSHAKING, 0, 0);
    private static final int STAGE_SIZE = TlsBridgeSession.PACKET_BUFFER_SIZE;

    private final ReentrantLock lock = new ReentrantLock();
    private final EngineConfig cfg;
    private final Handle handle = new Handle();
    private final Cleaner.Cleanable cleanable;
    private final Callbacks callbacks = new Callbacks(this);
    private final Results.Cache wrapResults = new Results.Cache();
    private final Results.Cache unwrapResults = new Results.Cache();
    private Handshaker handshaker;
    private volatile TlsBridgeSession session = TlsBridgeSession.NULL_SESSION;
    private boolean started;
    private boolean freed;
    private boolean inboundDone;
    private boolean outboundDone;
    private boolean taskOut;
    private ByteBuffer stage;
    private ByteBuffer stage2;

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
        super(host, port);
        this.cfg = new EngineConfig(ctx, host, port, false, false);
        this.cleanable = Cleaners.CLEANER.register(this, handle);
    }

    // ---- native lifetime ----

    @Override
    public long acquire() {
        lock.lock();
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
        handshaker = new Handshaker(this, cfg, this, null, getPeerHost(), getPeerPort());
        started = true;
        return p;
    }

    private void free() {
        freed = true;
        inboundDone = true;
        outboundDone = true;
        cleanable.clean();
    }

    /** After a CLOSED result: release native memory once both directions are done. */
    private void afterClosed(long p) {
        int st = Native.state(p);
        if (Results.stateInboundDone(st) && Results.stateOutboundDone(st)) {
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
        checkArray(srcs, offset, length);
        return doWrap(null, srcs, offset, length, dst);
    }

    private static ByteBuffer at(ByteBuffer single, ByteBuffer[] bufs, int i) {
        return single != null ? single : bufs[i];
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
            int first = -1;
            int count = 0;
            int total = 0;
            for (int i = offset; i < offset + length; i++) {
                int r = at(single, srcs, i).remaining();
                if (r > 0) {
                    if (first < 0) {
                        first = i;
                    }
                    count++;
                    total += r;
                }
            }
            ByteBuffer src = first < 0 ? null : at(single, srcs, first);
            boolean gather = count > 1 && src.remaining() < TlsBridgeSession.APPLICATION_BUFFER_SIZE;
            boolean staged = gather || (src != null && !src.isDirect() && !src.hasArray());
            if (staged) {
                src = gather(single != null ? new ByteBuffer[] {single} : srcs, first, offset + length, total);
            }
            long r;
            int dpos = dst.position();
            int dlen = Math.min(dst.remaining(), Results.MAX_LEN);
            int spos = src == null ? 0 : src.position();
            int slen = src == null ? 0 : Math.min(src.remaining(), Results.MAX_LEN);
            try {
                r = Native.wrap(p, src != null && src.isDirect() ? src : null,
                        src != null && !src.isDirect() ? src.array() : null,
                        src == null || src.isDirect() ? spos : src.arrayOffset() + spos, slen,
                        dst.isDirect() ? dst : null, dst.isDirect() ? null : dst.array(),
                        dst.isDirect() ? dpos : dst.arrayOffset() + dpos, dlen);
            } catch (SSLException e) {
                throw withCause(e);
            }
            int consumed = Results.consumed(r);
            int produced = Results.produced(r);
            if (consumed > 0) {
                if (staged && single == null) {
                    advance(srcs, first, offset + length, consumed);
                } else if (staged) {
                    single.position(single.position() + consumed);
                } else {
                    src.position(spos + consumed);
                }
            }
            dst.position(dpos + produced);
            return result(wrapResults, p, r, consumed, produced);
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
        checkArray(dsts, offset, length);
        return doUnwrap(src, null, dsts, offset, length);
    }

    private SSLEngineResult doUnwrap(ByteBuffer src, ByteBuffer single, ByteBuffer[] dsts, int offset, int length)
            throws SSLException {
        if (src == null) {
            throw new IllegalArgumentException("src is null");
        }
        for (int i = offset; i < offset + length; i++) {
            if (at(single, dsts, i).isReadOnly()) {
                throw new ReadOnlyBufferException();
            }
        }
        lock.lock();
        try {
            long p = ssl();
            if (p == 0) {
                return CLOSED_EMPTY;
            }
            int first = -1;
            long total = 0;
            for (int i = offset; i < offset + length; i++) {
                int r = at(single, dsts, i).remaining();
                if (r > 0) {
                    if (first < 0) {
                        first = i;
                    }
                    total += r;
                }
            }
            ByteBuffer dst = first < 0 ? null : at(single, dsts, first);
            boolean scatter = dst != null && dst.remaining() < TlsBridgeSession.APPLICATION_BUFFER_SIZE
                    && total > dst.remaining();
            if (scatter) {
                dst = stage2();
                dst.clear().limit((int) Math.min(TlsBridgeSession.APPLICATION_BUFFER_SIZE, total));
            }
            ByteBuffer in = src;
            boolean copiedIn = !src.isDirect() && !src.hasArray();
            if (copiedIn) {
                in = stage();
                in.clear();
                int n = Math.min(src.remaining(), in.capacity());
                in.put(src.duplicate().limit(src.position() + n)).flip();
            }
            int spos = in.position();
            int slen = Math.min(in.remaining(), Results.MAX_LEN);
            int dpos = dst == null ? 0 : dst.position();
            int dlen = dst == null ? 0 : Math.min(dst.remaining(), Results.MAX_LEN);
            long r;
            try {
                r = Native.unwrap(p, in.isDirect() ? in : null, in.isDirect() ? null : in.array(),
                        in.isDirect() ? spos : in.arrayOffset() + spos, slen,
                        dst != null && dst.isDirect() ? dst : null,
                        dst != null && !dst.isDirect() ? dst.array() : null,
                        dst == null || dst.isDirect() ? dpos : dst.arrayOffset() + dpos, dlen);
            } catch (SSLException e) {
                throw withCause(e);
            }
            int consumed = Results.consumed(r);
            int produced = Results.produced(r);
            src.position(src.position() + consumed);
            if (scatter) {
                dst.limit(produced).position(0);
                scatter(dst, dsts, first, offset + length);
            } else if (dst != null) {
                dst.position(dpos + produced);
            }
            return result(unwrapResults, p, r, consumed, produced);
        } finally {
            lock.unlock();
        }
    }

    private SSLEngineResult result(Results.Cache cache, long p, long r, int consumed, int produced) {
        Status status = Results.status(r);
        HandshakeStatus hs = Results.handshake(r);
        if (hs == HandshakeStatus.FINISHED) {
            session = handshaker.finish(p);
        }
        SSLEngineResult res = cache.get(status, hs, consumed, produced);
        if (status == Status.CLOSED) {
            afterClosed(p);
        }
        return res;
    }

    private static void checkArray(ByteBuffer[] bufs, int offset, int length) {
        if (bufs == null) {
            throw new IllegalArgumentException("buffer array is null");
        }
        if (offset < 0 || length < 0 || offset > bufs.length - length) {
            throw new IndexOutOfBoundsException("offset " + offset + ", length " + length + ", size " + bufs.length);
        }
        for (int i = offset; i < offset + length; i++) {
            if (bufs[i] == null) {
                throw new IllegalArgumentException("buffer " + i + " is null");
            }
        }
    }

    private ByteBuffer stage() {
        if (stage == null) {
            stage = ByteBuffer.allocateDirect(STAGE_SIZE);
        }
        return stage;
    }

    private ByteBuffer stage2() {
        if (stage2 == null) {
            stage2 = ByteBuffer.allocateDirect(TlsBridgeSession.APPLICATION_BUFFER_SIZE);
        }
        return stage2;
    }

    /** Several small sources make one record, not one record each. */
    private ByteBuffer gather(ByteBuffer[] srcs, int from, int to, int total) {
        ByteBuffer s = stage();
        s.clear().limit(Math.min(TlsBridgeSession.APPLICATION_BUFFER_SIZE, total));
        for (int i = from; i < to && s.hasRemaining(); i++) {
            ByteBuffer b = srcs[i].duplicate();
            if (b.remaining() > s.remaining()) {
                b.limit(b.position() + s.remaining());
            }
            s.put(b);
        }
        return s.flip();
    }

    private static void advance(ByteBuffer[] srcs, int from, int to, int n) {
        for (int i = from; i < to && n > 0; i++) {
            int k = Math.min(n, srcs[i].remaining());
            srcs[i].position(srcs[i].position() + k);
            n -= k;
        }
    }

    private static void scatter(ByteBuffer from, ByteBuffer[] dsts, int first, int end) {
        for (int i = first; i < end && from.hasRemaining(); i++) {
            ByteBuffer d = dsts[i];
            if (!d.hasRemaining()) {
                continue;
            }
            ByteBuffer part = from.duplicate();
            int n = Math.min(d.remaining(), part.remaining());
            part.limit(part.position() + n);
            d.put(part);
            from.position(from.position() + n);
        }
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

    @Override
    public HandshakeStatus getHandshakeStatus() {
        lock.lock();
        try {
            long p = handle.ptr;
            if (p == 0) {
                return HandshakeStatus.NOT_HANDSHAKING;
            }
            HandshakeStatus hs = Results.stateHandshake(Native.state(p));
            return hs == HandshakeStatus.FINISHED ? HandshakeStatus.NOT_HANDSHAKING : hs;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void closeInbound() throws SSLException {
        lock.lock();
        try {
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
        lock.lock();
        try {
            long p = handle.ptr;
            return p == 0 ? inboundDone : Results.stateInboundDone(Native.state(p));
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void closeOutbound() {
        lock.lock();
        try {
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
        lock.lock();
        try {
            long p = handle.ptr;
            return p == 0 ? outboundDone : Results.stateOutboundDone(Native.state(p));
        } finally {
            lock.unlock();
        }
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

    // ---- configuration ----

    private void beforeStart(String what) {
        if (started) {
            throw new IllegalArgumentException("cannot change " + what + " after the handshake has started");
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
        lock.lock();
        try {
            cfg.setSuites(suites);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public String[] getSupportedProtocols() {
        return org.tlsbridge.context.Protocols.supported();
    }

    @Override
    public String[] getEnabledProtocols() {
        return cfg.protocols();
    }

    @Override
    public void setEnabledProtocols(String[] protocols) {
        lock.lock();
        try {
            cfg.setProtocols(protocols);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void setUseClientMode(boolean mode) {
        lock.lock();
        try {
            if (started && mode != cfg.clientMode()) {
                throw new IllegalArgumentException("Cannot change mode after SSL traffic has started");
            }
            cfg.setClientMode(mode);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public boolean getUseClientMode() {
        return cfg.clientMode();
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
    public void setEnableSessionCreation(boolean flag) {
        cfg.setSessionCreation(flag);
    }

    @Override
    public boolean getEnableSessionCreation() {
        return cfg.sessionCreation();
    }

    @Override
    public SSLParameters getSSLParameters() {
        lock.lock();
        try {
            return cfg.parameters();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void setSSLParameters(SSLParameters params) {
        lock.lock();
        try {
            beforeStart("SSL parameters");
            cfg.setParameters(params);
        } finally {
            lock.unlock();
        }
    }

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
    public void setHandshakeApplicationProtocolSelector(BiFunction<SSLEngine, List<String>, String> selector) {
        cfg.alpnSelector = selector;
    }

    @Override
    public BiFunction<SSLEngine, List<String>, String> getHandshakeApplicationProtocolSelector() {
        return cfg.alpnSelector;
    }

    @Override
    public String toString() {
        return "TlsBridgeEngine[" + (cfg.clientMode() ? "client" : "server") + ", " + session + "]";
    }
}
