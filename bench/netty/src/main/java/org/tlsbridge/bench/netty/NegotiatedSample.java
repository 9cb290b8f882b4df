package org.tlsbridge.bench.netty;

import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLSession;

/**
 * The server-side proof of what each cell negotiated, printed as
 * {@code NEGOTIATED <protocol> <suite>} the way bench/sslsocket's server
 * prints it: for the first handshake, every Nth (benchmark.negotiatedEvery,
 * default 1000) and the first after benchmark.negotiatedGapMs (default 1000)
 * without a sample, so every load window that starts after an idle second is
 * proven. Unsampled handshakes cost a counter and a clock read.
 */
final class NegotiatedSample {
    private static final long EVERY = Math.max(1, Long.getLong("benchmark.negotiatedEvery", 1000));
    private static final long GAP_NS = Long.getLong("benchmark.negotiatedGapMs", 1000) * 1_000_000L;
    private static final AtomicLong COUNT = new AtomicLong();
    private static final AtomicLong LAST = new AtomicLong(System.nanoTime() - GAP_NS);

    private NegotiatedSample() {
    }

    static void handshake(SSLEngine engine) {
        long n = COUNT.getAndIncrement();
        long now = System.nanoTime();
        long last = LAST.get();
        boolean gap = now - last >= GAP_NS && LAST.compareAndSet(last, now);
        if (n == 0 || n % EVERY == 0 || gap) {
            LAST.set(now);
            SSLSession s = engine.getSession();
            System.out.println("NEGOTIATED " + s.getProtocol() + " " + s.getCipherSuite());
        }
    }
}
