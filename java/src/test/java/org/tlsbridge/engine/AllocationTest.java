package org.tlsbridge.engine;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.tlsbridge.test.Contexts;
import org.tlsbridge.test.EnginePair;

/** Steady-state wrap+unwrap allocates nothing on the Java heap. */
class AllocationTest {
    @ParameterizedTest(name = "direct={0}")
    @ValueSource(booleans = {true, false})
    void steadyStateAllocatesNothing(boolean direct) throws Exception {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        assertTrue(mx.isThreadAllocatedMemorySupported(), "allocation accounting unavailable on this JVM");
        EnginePair p = new EnginePair(Contexts.client(Contexts.TLSBRIDGE),
                Contexts.server(Contexts.TLSBRIDGE, "ec"), direct);
        p.handshake();
        ByteBuffer src = p.alloc(1024);
        ByteBuffer net = p.alloc(p.client.getSession().getPacketBufferSize());
        ByteBuffer app = p.alloc(p.server.getSession().getApplicationBufferSize());
        for (int i = 0; i < 20_000; i++) {
            p.record(src, net, app);
        }
        long tid = Thread.currentThread().getId();
        long before = mx.getThreadAllocatedBytes(tid);
        for (int i = 0; i < 20_000; i++) {
            p.record(src, net, app);
        }
        long allocated = mx.getThreadAllocatedBytes(tid) - before;
        assertTrue(allocated < 1024, "allocated " + allocated + " bytes over 20,000 wrap+unwrap");
    }
}
