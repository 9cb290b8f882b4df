package org.tlsbridge.soak;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.SSLEngineResult.Status;
import javax.net.ssl.SSLException;
import org.tlsbridge.TlsBridgeProvider;

/**
 * Engine pairs in memory, one worker per thread: each worker keeps up to
 * MAX_OPEN connections and, at random, opens one (full or resumed
 * handshake), moves data on one (either direction), or closes one
 * (close_notify from either side, one side only, or not at all: dropped for
 * the Cleaner). Every byte received is checked against the pattern.
 */
final class EngineLoad implements Runnable {
    private static final int MAX_OPEN = 8;
    /** Peers a resuming client returns to: the client cache is keyed by host:port. */
    private static final int PEERS = 64;
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

    private final Shared sh;
    private final SplittableRandom rnd;
    private final List<Conn> open = new ArrayList<>();
    /** Four records' room per direction, and one record of plaintext (both providers fit). */
    private static final int NET = 4 * (16384 + 2048 + 5);
    private static final int APP = 16384 + 2048 + 5;
    private final List<ByteBuffer> directPool = new ArrayList<>();
    private final List<ByteBuffer> heapPool = new ArrayList<>();

    EngineLoad(Shared sh, long seed) {
        this.sh = sh;
        this.rnd = new SplittableRandom(seed);
    }

    private final class Conn {
        final SSLEngine c;
        final SSLEngine s;
        final boolean tbClient;
        final boolean tbServer;
        final ByteBuffer c2s;
        final ByteBuffer s2c;
        final ByteBuffer cApp;
        final ByteBuffer sApp;
        final long seedCs = rnd.nextLong(Shared.PLEN);
        final long seedSc = rnd.nextLong(Shared.PLEN);
        long sentCs;
        long recvCs;
        long sentSc;
        long recvSc;
        final boolean direct = rnd.nextBoolean();

        Conn() {
            int kind = rnd.nextInt(100);
            // 5% SunJSSE client, 5% SunJSSE server; the rest tlsbridge both sides
            tbClient = kind >= 5;
            tbServer = kind < 5 || kind >= 10;
            SSLContext sctx = tbServer ? (rnd.nextBoolean() ? sh.tbServerEc : sh.tbServerRsa) : sh.sunServerEc;
            SSLContext cctx = tbClient ? sh.tbClient : sh.sunClient;
            // 30% full handshakes (no peer to resume with), 70% a known peer
            if (rnd.nextInt(10) < 3) {
                c = cctx.createSSLEngine();
            } else {
                int serverTag = sctx == sh.tbServerEc ? 0 : sctx == sh.tbServerRsa ? 1 : 2;
                c = cctx.createSSLEngine("localhost", 10000 + serverTag * 1000 + rnd.nextInt(PEERS));
            }
            c.setUseClientMode(true);
            if (rnd.nextInt(5) == 0) {
                c.setEnabledProtocols(new String[] {"TLSv1.2"});
            }
            s = sctx.createSSLEngine();
            s.setUseClientMode(false);
            if (Math.max(c.getSession().getPacketBufferSize(), s.getSession().getPacketBufferSize()) * 4 > NET
                    || Math.max(c.getSession().getApplicationBufferSize(),
                            s.getSession().getApplicationBufferSize()) > APP) {
                throw new IllegalStateException("buffer sizes above the soak's fixed ones");
            }
            List<ByteBuffer> pool = direct ? directPool : heapPool;
            if (pool.size() >= 4) {
                sApp = pool.remove(pool.size() - 1).clear();
                cApp = pool.remove(pool.size() - 1).clear();
                s2c = pool.remove(pool.size() - 1).clear();
                c2s = pool.remove(pool.size() - 1).clear();
            } else {
                c2s = alloc(NET);
                s2c = alloc(NET);
                cApp = alloc(APP);
                sApp = alloc(APP);
            }
        }

        ByteBuffer alloc(int n) {
            return direct ? ByteBuffer.allocateDirect(n) : ByteBuffer.allocate(n);
        }

        /** Buffers go back to the worker's pool, as an application would reuse them. */
        void recycle() {
            List<ByteBuffer> pool = direct ? directPool : heapPool;
            if (pool.size() < 4 * (MAX_OPEN + 1)) {
                pool.add(c2s);
                pool.add(s2c);
                pool.add(cApp);
                pool.add(sApp);
            }
        }
    }

    @Override
    public void run() {
        sh.addWorker();
        try {
            while (!sh.done()) {
                if (sh.pauseRequested()) {
                    closeAll();
                    // pooled buffers hold heap and native memory in varying amounts: a sample sees none
                    directPool.clear();
                    heapPool.clear();
                    sh.park();
                    continue;
                }
                int a = rnd.nextInt(100);
                if (open.isEmpty() || (open.size() < MAX_OPEN && a < 35)) {
                    openOne();
                } else if (a < 85) {
                    Conn k = open.get(rnd.nextInt(open.size()));
                    transfer(k);
                } else {
                    closeOne(open.remove(rnd.nextInt(open.size())));
                }
            }
            closeAll();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Throwable t) {
            sh.error("engine worker died", t);
        } finally {
            sh.removeWorker();
        }
    }

    private void closeAll() {
        while (!open.isEmpty()) {
            closeGracefully(open.remove(open.size() - 1), true);
        }
    }

    private void openOne() {
        Conn k;
        try {
            k = new Conn();
        } catch (RuntimeException e) {
            sh.error("create engines", e);
            return;
        }
        // 1% dropped mid-handshake: nothing closes them but the Cleaner
        int stopAfter = rnd.nextInt(100) == 0 ? 1 + rnd.nextInt(3) : Integer.MAX_VALUE;
        try {
            if (!handshake(k, stopAfter)) {
                sh.abandoned.incrementAndGet();
                sh.abandonedMidHandshake.incrementAndGet();
                return;
            }
        } catch (Exception e) {
            sh.error("handshake (tlsbridge client " + k.tbClient + ", server " + k.tbServer + ")", e);
            return;
        }
        sh.handshakes.incrementAndGet();
        sh.engineHandshakes.incrementAndGet();
        if (!k.tbClient || !k.tbServer) {
            sh.sunHandshakes.incrementAndGet();
        }
        if ("TLSv1.2".equals(k.c.getSession().getProtocol())) {
            sh.tls12.incrementAndGet();
        }
        if (k.tbServer ? TlsBridgeProvider.isResumed(k.s.getSession()) : TlsBridgeProvider.isResumed(k.c.getSession())) {
            sh.resumed.incrementAndGet();
        }
        open.add(k);
    }

    private static boolean done(SSLEngine e) {
        HandshakeStatus h = e.getHandshakeStatus();
        return h == HandshakeStatus.NOT_HANDSHAKING || h == HandshakeStatus.FINISHED;
    }

    /** False if stopped on purpose after stopAfter rounds. */
    private boolean handshake(Conn k, int stopAfter) throws SSLException {
        k.c.beginHandshake();
        k.s.beginHandshake();
        for (int i = 0; i < 100; i++) {
            if (i >= stopAfter) {
                return false;
            }
            boolean a = step(k.c, k.c2s, k.s2c, k.cApp);
            boolean b = step(k.s, k.s2c, k.c2s, k.sApp);
            if (done(k.c) && done(k.s)) {
                return true;
            }
            if (!a && !b) {
                throw new SSLException("handshake stuck: client " + k.c.getHandshakeStatus() + ", server "
                        + k.s.getHandshakeStatus());
            }
        }
        throw new SSLException("handshake did not finish in 100 rounds");
    }

    private static void runTasks(SSLEngine e) {
        Runnable t;
        while ((t = e.getDelegatedTask()) != null) {
            t.run();
        }
    }

    private static boolean step(SSLEngine e, ByteBuffer out, ByteBuffer in, ByteBuffer app) throws SSLException {
        boolean progress = false;
        if (e.getHandshakeStatus() == HandshakeStatus.NEED_TASK) {
            runTasks(e);
            return true;
        }
        if (e.getHandshakeStatus() == HandshakeStatus.NEED_WRAP) {
            SSLEngineResult r = e.wrap(EMPTY, out);
            progress |= r.bytesProduced() > 0 || r.getHandshakeStatus() != HandshakeStatus.NEED_WRAP;
        }
        if (e.getHandshakeStatus() == HandshakeStatus.NEED_TASK) {
            runTasks(e);
            return true;
        }
        in.flip();
        try {
            if (in.hasRemaining()) {
                SSLEngineResult r = e.unwrap(in, app);
                progress |= r.bytesConsumed() > 0;
                if (r.bytesProduced() > 0) {
                    throw new SSLException("application data during the handshake");
                }
            }
        } finally {
            in.compact();
        }
        return progress;
    }

    private void transfer(Conn k) {
        long n = sh.nextTransfer(rnd, 8L << 20);
        try {
            if (rnd.nextBoolean()) {
                k.sentCs = send(k.c, k.s, k.c2s, k.s2c, k.sApp, k.seedCs, k.sentCs, n, k, true);
            } else {
                k.sentSc = send(k.s, k.c, k.s2c, k.c2s, k.cApp, k.seedSc, k.sentSc, n, k, false);
            }
        } catch (Exception e) {
            sh.error("transfer", e);
            open.remove(k);
        }
    }

    /** Sends n pattern bytes from one engine to the other; returns the sender's new offset. */
    private long send(SSLEngine from, SSLEngine to, ByteBuffer net, ByteBuffer back, ByteBuffer app, long seed,
            long offset, long n, Conn k, boolean cs) throws SSLException {
        long left = n;
        while (left > 0) {
            int chunk = (int) Math.min(left, 256 * 1024);
            int s = Shared.start(seed, offset);
            ByteBuffer src = k.direct ? Shared.P_DIRECT.slice(s, chunk) : ByteBuffer.wrap(Shared.P, s, chunk);
            int guard = 0;
            while (src.hasRemaining()) {
                SSLEngineResult r = from.wrap(src, net);
                if (r.getStatus() == Status.CLOSED) {
                    throw new SSLException("wrap: closed");
                }
                if (r.getStatus() == Status.BUFFER_OVERFLOW || net.remaining() < 17 * 1024) {
                    deliver(to, net, back, app, seed, k, cs, from);
                }
                if (++guard > 100_000) {
                    throw new SSLException("wrap makes no progress: " + r);
                }
            }
            offset += chunk;
            left -= chunk;
        }
        deliver(to, net, back, app, seed, k, cs, from);
        sh.bytes.addAndGet(n);
        sh.engineBytes.addAndGet(n);
        return offset;
    }

    /** The receiver unwraps everything in net, checking each plaintext byte. */
    private void deliver(SSLEngine to, ByteBuffer net, ByteBuffer back, ByteBuffer app, long seed, Conn k, boolean cs,
            SSLEngine from) throws SSLException {
        net.flip();
        try {
            while (net.hasRemaining()) {
                SSLEngineResult r = to.unwrap(net, app);
                app.flip();
                if (app.hasRemaining()) {
                    long off = cs ? k.recvCs : k.recvSc;
                    if (!Shared.matches(app, seed, off)) {
                        throw new SSLException("received bytes differ from those sent at offset " + off);
                    }
                    if (cs) {
                        k.recvCs += app.remaining();
                    } else {
                        k.recvSc += app.remaining();
                    }
                }
                app.clear();
                if (r.getHandshakeStatus() == HandshakeStatus.NEED_TASK) {
                    runTasks(to);
                }
                if (to.getHandshakeStatus() == HandshakeStatus.NEED_WRAP) {
                    to.wrap(EMPTY, back); // e.g. a KeyUpdate answer; the peer reads it later
                }
                if (r.getStatus() == Status.BUFFER_UNDERFLOW || r.getStatus() == Status.CLOSED) {
                    break;
                }
                if (r.bytesConsumed() == 0 && r.bytesProduced() == 0) {
                    throw new SSLException("unwrap makes no progress: " + r);
                }
            }
        } finally {
            net.compact();
        }
    }

    private void closeOne(Conn k) {
        int how = rnd.nextInt(100);
        if (how < 2) {
            sh.abandoned.incrementAndGet(); // dropped: the Cleaner frees both engines
        } else if (how < 7) {
            // one side says close_notify, nobody reads it, both dropped
            k.c.closeOutbound();
            try {
                k.c.wrap(EMPTY, k.c2s);
            } catch (SSLException e) {
                sh.error("one-sided close", e);
            }
            sh.oneSided.incrementAndGet();
            k.recycle();
        } else {
            closeGracefully(k, how < 80);
        }
    }

    /** close_notify from one side, answered by the other; every state checked. */
    private void closeGracefully(Conn k, boolean clientFirst) {
        SSLEngine first = clientFirst ? k.c : k.s;
        SSLEngine second = clientFirst ? k.s : k.c;
        ByteBuffer firstOut = clientFirst ? k.c2s : k.s2c;
        ByteBuffer secondOut = clientFirst ? k.s2c : k.c2s;
        ByteBuffer firstApp = clientFirst ? k.cApp : k.sApp;
        ByteBuffer secondApp = clientFirst ? k.sApp : k.cApp;
        try {
            first.closeOutbound();
            wrapUntilClosed(first, firstOut);
            drainUntilInboundDone(second, firstOut, secondApp);
            second.closeOutbound();
            wrapUntilClosed(second, secondOut);
            drainUntilInboundDone(first, secondOut, firstApp);
            if (!(k.c.isInboundDone() && k.c.isOutboundDone() && k.s.isInboundDone() && k.s.isOutboundDone())) {
                throw new SSLException("after close: client in/out " + k.c.isInboundDone() + "/"
                        + k.c.isOutboundDone() + ", server " + k.s.isInboundDone() + "/" + k.s.isOutboundDone());
            }
            sh.graceful.incrementAndGet();
            k.recycle();
        } catch (Exception e) {
            sh.error("graceful close (" + (clientFirst ? "client" : "server") + " first, tlsbridge client "
                    + k.tbClient + ", server " + k.tbServer + ", " + k.c.getSession().getProtocol() + ")", e);
        }
    }

    private static void wrapUntilClosed(SSLEngine e, ByteBuffer out) throws SSLException {
        for (int i = 0; i < 10 && !e.isOutboundDone(); i++) {
            e.wrap(EMPTY, out);
        }
        if (!e.isOutboundDone()) {
            throw new SSLException("outbound not done after closeOutbound and wraps");
        }
    }

    /** Unwraps what is left (tickets, then close_notify); application data here is an error. */
    private static void drainUntilInboundDone(SSLEngine e, ByteBuffer in, ByteBuffer app) throws SSLException {
        in.flip();
        try {
            for (int i = 0; i < 50 && in.hasRemaining() && !e.isInboundDone(); i++) {
                SSLEngineResult r = e.unwrap(in, app);
                if (r.bytesProduced() > 0) {
                    throw new SSLException("application data after everything was delivered");
                }
                if (r.getHandshakeStatus() == HandshakeStatus.NEED_TASK) {
                    runTasks(e);
                }
                if (r.getStatus() == Status.BUFFER_UNDERFLOW) {
                    break;
                }
            }
        } finally {
            in.compact();
        }
        if (!e.isInboundDone()) {
            throw new SSLException("inbound not done after the peer's close_notify");
        }
    }
}
