package org.tlsbridge.soak;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.Provider;
import java.security.cert.CertificateFactory;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * What the engine and socket loads share: the targets and counters, the
 * pause used to sample a quiet process, the contexts, and the byte pattern
 * every transfer is checked against.
 */
final class Shared {
    /** Every stream is P[(seed + offset) % PLEN]; P holds the pattern twice so any slice up to PLEN is contiguous. */
    static final int PLEN = 1 << 20;
    static final byte[] P = new byte[2 * PLEN];
    static final ByteBuffer P_DIRECT;

    static {
        SplittableRandom r = new SplittableRandom(20261202);
        for (int i = 0; i < PLEN; i++) {
            P[i] = (byte) r.nextInt(256);
        }
        System.arraycopy(P, 0, P, PLEN, PLEN);
        P_DIRECT = ByteBuffer.allocateDirect(P.length);
        P_DIRECT.put(P).clear();
    }

    final long handshakeTarget;
    final long byteTarget;
    final long deadlineNanos;

    final AtomicLong handshakes = new AtomicLong();
    final AtomicLong resumed = new AtomicLong();
    final AtomicLong bytes = new AtomicLong();
    final AtomicLong engineHandshakes = new AtomicLong();
    final AtomicLong engineBytes = new AtomicLong();
    final AtomicLong socketHandshakes = new AtomicLong();
    final AtomicLong socketBytes = new AtomicLong();
    final AtomicLong socketResumed = new AtomicLong();
    final AtomicLong sunHandshakes = new AtomicLong();
    final AtomicLong tls12 = new AtomicLong();
    final AtomicLong abandoned = new AtomicLong();
    final AtomicLong abandonedMidHandshake = new AtomicLong();
    final AtomicLong oneSided = new AtomicLong();
    final AtomicLong graceful = new AtomicLong();
    final AtomicLong abrupt = new AtomicLong();
    final AtomicLong serverAborts = new AtomicLong();
    final AtomicLong errors = new AtomicLong();
    final ConcurrentLinkedQueue<String> errorLog = new ConcurrentLinkedQueue<>();

    /** Sampling: workers finish what they hold, then wait here. */
    private final Object pauseLock = new Object();
    private boolean pauseRequested;
    private int parked;
    private int workers;
    volatile boolean stop;
    /** Socket connections a client has opened and the server has not finished with. */
    final AtomicInteger liveSocketConns = new AtomicInteger();

    final Provider tlsbridge;
    final SSLContext tbServerEc;
    final SSLContext tbServerRsa;
    final SSLContext tbClient;
    final SSLContext sunServerEc;
    final SSLContext sunClient;

    Shared(long handshakeTarget, long byteTarget, long deadlineNanos, Path pki, Provider tlsbridge) throws Exception {
        this.handshakeTarget = handshakeTarget;
        this.byteTarget = byteTarget;
        this.deadlineNanos = deadlineNanos;
        this.tlsbridge = tlsbridge;
        Provider sun = java.security.Security.getProvider("SunJSSE");
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        CertificateFactory cf = CertificateFactory.getInstance("X.509");
        trust.setCertificateEntry("ca",
                cf.generateCertificate(new ByteArrayInputStream(Files.readAllBytes(pki.resolve("ca.pem")))));
        TrustManagerFactory tmf = TrustManagerFactory.getInstance("PKIX");
        tmf.init(trust);
        tbServerEc = context(tlsbridge, pki.resolve("ec.p12"), tmf);
        tbServerRsa = context(tlsbridge, pki.resolve("rsa.p12"), tmf);
        tbClient = context(tlsbridge, null, tmf);
        sunServerEc = context(sun, pki.resolve("ec.p12"), tmf);
        sunClient = context(sun, null, tmf);
        // Caches small enough to be full well inside the warm-up: a cache
        // still filling would read as growth, and a full one shows whether
        // eviction frees what it should.
        for (SSLContext c : List.of(tbServerEc, tbServerRsa, tbClient, sunServerEc, sunClient)) {
            c.getServerSessionContext().setSessionCacheSize(2000);
            c.getClientSessionContext().setSessionCacheSize(2000);
        }
    }

    private static SSLContext context(Provider p, Path p12, TrustManagerFactory tmf) throws Exception {
        SSLContext c = SSLContext.getInstance("TLS", p);
        KeyManagerFactory kmf = null;
        if (p12 != null) {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            try (InputStream in = Files.newInputStream(p12)) {
                ks.load(in, "soak".toCharArray());
            }
            kmf = KeyManagerFactory.getInstance("SunX509");
            kmf.init(ks, "soak".toCharArray());
        }
        c.init(kmf == null ? null : kmf.getKeyManagers(), tmf.getTrustManagers(), null);
        return c;
    }

    boolean done() {
        if (stop) {
            return true;
        }
        if (System.nanoTime() - deadlineNanos > 0
                || (handshakes.get() >= handshakeTarget && bytes.get() >= byteTarget)) {
            stop = true;
        }
        return stop;
    }

    /**
     * Bytes for the next transfer: keeps bytes/handshakes near the targets'
     * ratio, so both targets are reached together (or cut short in step).
     */
    long nextTransfer(SplittableRandom rnd, long cap) {
        double ratio = handshakeTarget == 0 ? 0 : (double) byteTarget / handshakeTarget;
        long want = (long) (ratio * (handshakes.get() + 1)) - bytes.get();
        if (handshakes.get() >= handshakeTarget) {
            want = byteTarget - bytes.get();
        }
        if (want <= 0) {
            return rnd.nextInt(4) == 0 ? 0 : rnd.nextInt(2048);
        }
        return rnd.nextLong(Math.min(want, cap) + 1);
    }

    void error(String what, Throwable t) {
        errors.incrementAndGet();
        if (errorLog.size() < 50) {
            errorLog.add(what + ": " + (t == null ? "" : t.toString()));
            if (t != null && errorLog.size() < 5) {
                t.printStackTrace();
            }
        }
    }

    // --- pause for sampling -------------------------------------------------

    void addWorker() {
        synchronized (pauseLock) {
            workers++;
        }
    }

    void removeWorker() {
        synchronized (pauseLock) {
            workers--;
            pauseLock.notifyAll();
        }
    }

    boolean pauseRequested() {
        synchronized (pauseLock) {
            return pauseRequested;
        }
    }

    /** Called by a worker holding nothing open; returns once sampling is over. */
    void park() throws InterruptedException {
        synchronized (pauseLock) {
            parked++;
            pauseLock.notifyAll();
            while (pauseRequested && !stop) {
                pauseLock.wait(1000);
            }
            parked--;
        }
    }

    /** Waits until every worker is parked and the servers have finished; false on timeout. */
    boolean pauseAll(long timeoutMs) throws InterruptedException {
        long end = System.currentTimeMillis() + timeoutMs;
        synchronized (pauseLock) {
            pauseRequested = true;
            while (parked < workers) {
                long left = end - System.currentTimeMillis();
                if (left <= 0) {
                    return false;
                }
                pauseLock.wait(left);
            }
        }
        while (liveSocketConns.get() > 0) {
            if (System.currentTimeMillis() > end) {
                return false;
            }
            Thread.sleep(5);
        }
        return true;
    }

    void resumeAll() {
        synchronized (pauseLock) {
            pauseRequested = false;
            pauseLock.notifyAll();
        }
    }

    // --- pattern checks -----------------------------------------------------

    static int start(long seed, long offset) {
        return (int) Math.floorMod(seed + offset, (long) PLEN);
    }

    /** Checks the bytes between buf's position and limit against the stream at offset. */
    static boolean matches(ByteBuffer buf, long seed, long offset) {
        int n = buf.remaining();
        int s = start(seed, offset);
        if (buf.hasArray()) {
            int from = buf.arrayOffset() + buf.position();
            return Arrays.mismatch(buf.array(), from, from + n, P, s, s + n) < 0;
        }
        return buf.mismatch(P_DIRECT.slice(s, n)) < 0;
    }

    static boolean matches(byte[] b, int off, int n, long seed, long offset) {
        int s = start(seed, offset);
        return Arrays.mismatch(b, off, off + n, P, s, s + n) < 0;
    }
}
