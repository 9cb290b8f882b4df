package org.tlsbridge.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.security.Provider;
import java.util.stream.Stream;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.SSLEngineResult.Status;
import javax.net.ssl.SSLException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.tlsbridge.test.Contexts;
import org.tlsbridge.test.EnginePair;

/**
 * An unwrap of an empty buffer, which Tomcat's SecureNioChannel makes after
 * every socket read that found nothing (once per keep-alive request): after
 * a record it answers BUFFER_UNDERFLOW, NOT_HANDSHAKING, 0/0 without a
 * native call (TlsBridgeEngine.idleIn) and without allocating, and after
 * anything that leaves the engine something to say (queued output, the end
 * of input, a failure) it still says it. SunJSSE runs the same sequences as
 * the tie-breaker of what the answers must be.
 */
class EmptyUnwrapTest {
    static Stream<Arguments> providers() {
        return Stream.of(Arguments.of("TLSBridge", Contexts.TLSBRIDGE), Arguments.of("SunJSSE", Contexts.sun()));
    }

    private static EnginePair pair(Provider p, boolean direct) throws SSLException {
        EnginePair pair = new EnginePair(Contexts.client(p), Contexts.server(p, "ec"), direct);
        pair.handshake();
        return pair;
    }

    private static void assertResult(Status st, HandshakeStatus hs, SSLEngineResult r) {
        assertEquals(st, r.getStatus(), r.toString());
        assertEquals(hs, r.getHandshakeStatus(), r.toString());
        assertEquals(0, r.bytesConsumed(), r.toString());
        assertEquals(0, r.bytesProduced(), r.toString());
    }

    /** A request record in and the empty read after it, as Tomcat makes for each keep-alive request. */
    private static void request(EnginePair p, ByteBuffer src, ByteBuffer net, ByteBuffer empty, ByteBuffer app)
            throws SSLException {
        p.record(src, net, app);
        SSLEngineResult e = p.server.unwrap(empty, app);
        if (e.getStatus() != Status.BUFFER_UNDERFLOW || e.getHandshakeStatus() != HandshakeStatus.NOT_HANDSHAKING
                || e.bytesConsumed() != 0 || e.bytesProduced() != 0 || app.position() != src.capacity()) {
            assertResult(Status.BUFFER_UNDERFLOW, HandshakeStatus.NOT_HANDSHAKING, e);
            assertEquals(src.capacity(), app.position(), "an empty unwrap moved the destination");
        }
    }

    @ParameterizedTest(name = "{0} direct={1}")
    @MethodSource("args")
    void emptyUnwrapAfterARecordIsUnderflow(String name, Provider p, boolean direct) throws Exception {
        EnginePair pair = pair(p, direct);
        ByteBuffer src = pair.alloc(1024);
        ByteBuffer net = pair.alloc(pair.client.getSession().getPacketBufferSize());
        ByteBuffer app = pair.alloc(pair.server.getSession().getApplicationBufferSize());
        ByteBuffer empty = pair.alloc(16).flip();
        for (int i = 0; i < 3; i++) {
            request(pair, src, net, empty, app);
        }
        // the first empty unwrap right after the handshake, then a record half here, half later
        EnginePair fresh = pair(p, direct);
        assertResult(Status.BUFFER_UNDERFLOW, HandshakeStatus.NOT_HANDSHAKING, fresh.server.unwrap(empty, app.clear()));
        byte[] data = new byte[300];
        for (int i = 0; i < data.length; i++) {
            data[i] = (byte) i;
        }
        ByteBuffer rec = fresh.alloc(fresh.client.getSession().getPacketBufferSize());
        fresh.client.wrap(fresh.alloc(data.length).put(data).flip(), rec);
        rec.flip();
        int full = rec.limit();
        rec.limit(full / 2);
        assertResult(Status.BUFFER_UNDERFLOW, HandshakeStatus.NOT_HANDSHAKING, fresh.server.unwrap(rec, app.clear()));
        assertEquals(0, rec.position());
        assertResult(Status.BUFFER_UNDERFLOW, HandshakeStatus.NOT_HANDSHAKING, fresh.server.unwrap(empty, app));
        rec.limit(full);
        SSLEngineResult r = fresh.server.unwrap(rec, app);
        assertEquals(Status.OK, r.getStatus());
        assertEquals(full, r.bytesConsumed());
        byte[] got = new byte[data.length];
        app.flip().get(got);
        assertArrayEquals(data, got);
    }

    static Stream<Arguments> args() {
        return providers().flatMap(a -> Stream.of(Arguments.of(a.get()[0], a.get()[1], true),
                Arguments.of(a.get()[0], a.get()[1], false)));
    }

    @ParameterizedTest(name = "direct={0}")
    @ValueSource(booleans = {true, false})
    void keepAliveRequestsAllocateNothing(boolean direct) throws Exception {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        assertTrue(mx.isThreadAllocatedMemorySupported(), "allocation accounting unavailable on this JVM");
        EnginePair pair = pair(Contexts.TLSBRIDGE, direct);
        ByteBuffer src = pair.alloc(1024);
        ByteBuffer net = pair.alloc(pair.client.getSession().getPacketBufferSize());
        ByteBuffer app = pair.alloc(pair.server.getSession().getApplicationBufferSize());
        ByteBuffer empty = pair.alloc(0);
        for (int i = 0; i < 20_000; i++) {
            request(pair, src, net, empty, app);
        }
        long tid = Thread.currentThread().getId();
        long before = mx.getThreadAllocatedBytes(tid);
        for (int i = 0; i < 20_000; i++) {
            request(pair, src, net, empty, app);
        }
        long allocated = mx.getThreadAllocatedBytes(tid) - before;
        assertTrue(allocated < 1024, "allocated " + allocated + " bytes over 20,000 record + empty unwraps");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("providers")
    void closeOutboundThenEmptyUnwrapAsksForTheWrap(String name, Provider p) throws Exception {
        EnginePair pair = pair(p, false);
        ByteBuffer empty = ByteBuffer.allocate(0);
        ByteBuffer app = ByteBuffer.allocate(pair.server.getSession().getApplicationBufferSize());
        assertResult(Status.BUFFER_UNDERFLOW, HandshakeStatus.NOT_HANDSHAKING, pair.server.unwrap(empty, app));
        pair.server.closeOutbound();
        SSLEngineResult r = pair.server.unwrap(empty, app);
        assertEquals(HandshakeStatus.NEED_WRAP, r.getHandshakeStatus(), r.toString());
        assertEquals(0, r.bytesConsumed());
        assertEquals(0, r.bytesProduced());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("providers")
    void peerCloseThenEmptyUnwrapIsClosed(String name, Provider p) throws Exception {
        EnginePair pair = pair(p, false);
        ByteBuffer empty = ByteBuffer.allocate(0);
        ByteBuffer app = ByteBuffer.allocate(pair.server.getSession().getApplicationBufferSize());
        assertResult(Status.BUFFER_UNDERFLOW, HandshakeStatus.NOT_HANDSHAKING, pair.server.unwrap(empty, app));
        pair.client.closeOutbound();
        ByteBuffer net = ByteBuffer.allocate(pair.client.getSession().getPacketBufferSize());
        pair.client.wrap(ByteBuffer.allocate(0), net);
        net.flip();
        assertEquals(Status.CLOSED, pair.server.unwrap(net, app).getStatus());
        SSLEngineResult r = pair.server.unwrap(empty, app);
        assertEquals(Status.CLOSED, r.getStatus(), r.toString());
        assertTrue(pair.server.isInboundDone());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("providers")
    void closeInboundThenEmptyUnwrapIsClosed(String name, Provider p) throws Exception {
        EnginePair pair = pair(p, false);
        ByteBuffer empty = ByteBuffer.allocate(0);
        ByteBuffer app = ByteBuffer.allocate(pair.server.getSession().getApplicationBufferSize());
        assertResult(Status.BUFFER_UNDERFLOW, HandshakeStatus.NOT_HANDSHAKING, pair.server.unwrap(empty, app));
        assertThrows(SSLException.class, pair.server::closeInbound); // no close_notify from the peer
        assertEquals(Status.CLOSED, pair.server.unwrap(empty, app).getStatus());
    }

    /** A record that fails to decrypt: the engine is done, and an empty unwrap after it says so. */
    @Test
    void failureThenEmptyUnwrapIsClosed() throws Exception {
        EnginePair pair = pair(Contexts.TLSBRIDGE, false);
        SSLEngine server = pair.server;
        ByteBuffer empty = ByteBuffer.allocate(0);
        ByteBuffer app = ByteBuffer.allocate(server.getSession().getApplicationBufferSize());
        assertResult(Status.BUFFER_UNDERFLOW, HandshakeStatus.NOT_HANDSHAKING, server.unwrap(empty, app));
        ByteBuffer net = ByteBuffer.allocate(pair.client.getSession().getPacketBufferSize());
        pair.client.wrap(ByteBuffer.wrap(new byte[100]), net);
        net.flip();
        net.put(net.limit() - 1, (byte) (net.get(net.limit() - 1) ^ 1));
        assertThrows(SSLException.class, () -> server.unwrap(net, app));
        SSLEngineResult r = server.unwrap(empty, app);
        assertEquals(Status.CLOSED, r.getStatus(), r.toString());
        assertTrue(server.isInboundDone());
    }
}
