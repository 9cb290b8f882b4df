package org.tlsbridge.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import javax.net.ssl.SSLEngineResult;
import org.junit.jupiter.api.Test;
import org.tlsbridge.test.Contexts;
import org.tlsbridge.test.EnginePair;

/**
 * Heap buffers of an established connection reach OpenSSL as pinned arrays
 * at {@code arrayOffset() + position()} (RecordPath, jni_engine.c): buffers
 * that start inside their array (slices) and at a position are read and
 * written exactly where they are, small records and records larger than a
 * handshake's copy path alike, and several records in one source come out
 * whole. Other tests wrap whole arrays only, where an offset mistake on
 * either side cancels out.
 */
class HeapArrayTest {
    private static final int[] SIZES = {1, 700, 2048, 4000, 16383, 16384};

    @Test
    void slicesAtPositionsAreReadAndWrittenInPlace() throws Exception {
        EnginePair p = established();
        int net = p.client.getSession().getPacketBufferSize();
        int app = p.server.getSession().getApplicationBufferSize();
        for (int i = 0; i < SIZES.length; i++) {
            byte[] data = pattern(SIZES[i], i);
            ByteBuffer src = inside(data.length + 40, 13, 7);
            src.put(data).flip().position(7);
            ByteBuffer out = inside(net + 60, 29, 11);
            SSLEngineResult w = p.client.wrap(src, out);
            assertEquals(data.length, w.bytesConsumed(), "size " + data.length);
            assertEquals(7 + data.length, src.position());
            assertEquals(11 + w.bytesProduced(), out.position());
            out.flip().position(11);
            ByteBuffer dst = inside(app + 50, 17, 5);
            SSLEngineResult u = p.server.unwrap(out, dst);
            assertEquals(w.bytesProduced(), u.bytesConsumed(), "size " + data.length);
            assertEquals(data.length, u.bytesProduced(), "size " + data.length);
            assertArrayEquals(data, taken(dst, 5), "size " + data.length);
        }
    }

    @Test
    void smallAndLargeRecordsInOneSource() throws Exception {
        EnginePair p = established();
        int net = p.client.getSession().getPacketBufferSize();
        byte[] small = pattern(300, 1);
        byte[] large = pattern(9000, 2);
        ByteBuffer wire = ByteBuffer.allocate(3 * net);
        assertEquals(small.length, p.client.wrap(ByteBuffer.wrap(small), wire).bytesConsumed());
        assertEquals(large.length, p.client.wrap(ByteBuffer.wrap(large), wire).bytesConsumed());
        assertEquals(small.length, p.client.wrap(ByteBuffer.wrap(small), wire).bytesConsumed());
        wire.flip();
        // room beyond the plaintext: the engine asks for a record's bound, not its exact size
        ByteBuffer dst = ByteBuffer.allocate(2 * small.length + large.length + 64);
        while (wire.hasRemaining()) {
            SSLEngineResult u = p.server.unwrap(wire, dst);
            assertEquals(SSLEngineResult.Status.OK, u.getStatus());
        }
        int total = small.length + large.length + small.length;
        assertEquals(total, dst.position());
        byte[] want = new byte[total];
        System.arraycopy(small, 0, want, 0, small.length);
        System.arraycopy(large, 0, want, small.length, large.length);
        System.arraycopy(small, 0, want, small.length + large.length, small.length);
        assertArrayEquals(want, java.util.Arrays.copyOf(dst.array(), want.length));
    }

    private static EnginePair established() throws Exception {
        EnginePair p = new EnginePair(Contexts.client(Contexts.TLSBRIDGE),
                Contexts.server(Contexts.TLSBRIDGE, "ec"), false);
        p.handshake();
        return p;
    }

    private static byte[] pattern(int n, int seed) {
        byte[] b = new byte[n];
        for (int j = 0; j < n; j++) {
            b[j] = (byte) (seed * 31 + j * 7);
        }
        return b;
    }

    /** A heap buffer whose content starts {@code at} bytes into its array, positioned at {@code pos}. */
    private static ByteBuffer inside(int len, int at, int pos) {
        return ByteBuffer.allocate(at + len).position(at).slice().position(pos);
    }

    private static byte[] taken(ByteBuffer dst, int from) {
        byte[] got = new byte[dst.position() - from];
        dst.duplicate().flip().position(from).get(got);
        return got;
    }
}
