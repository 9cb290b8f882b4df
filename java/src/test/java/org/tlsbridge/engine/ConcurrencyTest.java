package org.tlsbridge.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLException;
import org.junit.jupiter.api.Test;
import org.tlsbridge.test.Contexts;
import org.tlsbridge.test.EnginePair;

/**
 * Many engines on many threads sharing one context, and closes racing I/O:
 * the shapes of the use-after-free bugs that crashed other OpenSSL engines.
 * Any native crash takes the JVM down and fails the build.
 */
class ConcurrencyTest {
    private static final SSLContext CLIENT = Contexts.client(Contexts.TLSBRIDGE);
    private static final SSLContext SERVER = Contexts.server(Contexts.TLSBRIDGE, "ec", "rsa");

    @Test
    void manyThreadsManyPairs() throws Exception {
        int threads = 64;
        int pairsEach = 200;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        AtomicInteger done = new AtomicInteger();
        List<Future<?>> fs = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            long seed = t;
            fs.add(pool.submit(() -> {
                Random rnd = new Random(seed);
                for (int i = 0; i < pairsEach; i++) {
                    EnginePair p = new EnginePair(CLIENT, SERVER, rnd.nextBoolean());
                    p.client.setEnabledProtocols(new String[] {rnd.nextBoolean() ? "TLSv1.2" : "TLSv1.3"});
                    p.handshake();
                    byte[] msg = new byte[rnd.nextInt(40_000)];
                    rnd.nextBytes(msg);
                    assertArrayEquals(msg, p.send(p.client, msg));
                    assertArrayEquals(msg, p.send(p.server, msg));
                    p.close(rnd.nextBoolean() ? p.client : p.server);
                    done.incrementAndGet();
                }
                return null;
            }));
        }
        for (Future<?> f : fs) {
            f.get(20, TimeUnit.MINUTES);
        }
        pool.shutdown();
        assertEquals(threads * pairsEach, done.get());
    }

    @Test
    void closesRacingWrapAndUnwrap() throws Exception {
        int rounds = 10_000;
        ExecutorService pool = Executors.newFixedThreadPool(4);
        AtomicLong ops = new AtomicLong();
        Random rnd = new Random(7);
        for (int i = 0; i < rounds; i++) {
            EnginePair p = new EnginePair(CLIENT, SERVER, (i & 1) == 0);
            if ((i & 3) != 3) {
                p.handshake(); // one in four races an engine still in its handshake
            }
            SSLEngine victim = (i & 4) == 0 ? p.client : p.server;
            Future<?> io = pool.submit(() -> hammer(victim, ops));
            Future<?> io2 = pool.submit(() -> hammer(victim, ops));
            if (rnd.nextBoolean()) {
                Thread.onSpinWait();
            }
            victim.closeOutbound();
            try {
                victim.closeInbound();
            } catch (SSLException expected) {
                // truncation: no close_notify from the peer
            }
            io.get(30, TimeUnit.SECONDS);
            io2.get(30, TimeUnit.SECONDS);
            assertTrue(victim.isInboundDone());
        }
        pool.shutdown();
        assertTrue(ops.get() > 0);
    }

    private static Object hammer(SSLEngine e, AtomicLong ops) {
        ByteBuffer src = ByteBuffer.allocateDirect(1024);
        ByteBuffer net = ByteBuffer.allocateDirect(e.getSession().getPacketBufferSize());
        ByteBuffer app = ByteBuffer.allocateDirect(e.getSession().getApplicationBufferSize());
        for (int k = 0; k < 50; k++) {
            try {
                src.clear();
                net.clear();
                SSLEngineResult r = e.wrap(src, net);
                net.flip();
                app.clear();
                e.unwrap(net, app);
                ops.incrementAndGet();
                if (r.getStatus() == SSLEngineResult.Status.CLOSED) {
                    break;
                }
            } catch (SSLException | IllegalStateException expected) {
                break; // our own records fed back are garbage to this engine: fine
            }
        }
        return null;
    }
}
