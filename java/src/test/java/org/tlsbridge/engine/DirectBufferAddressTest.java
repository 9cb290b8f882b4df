package org.tlsbridge.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import javax.net.ssl.SSLEngineResult;
import org.junit.jupiter.api.Test;
import org.tlsbridge.test.Contexts;
import org.tlsbridge.test.EnginePair;

/**
 * The engine keeps the address of the last direct buffer per role: buffers
 * that change between calls (slices of one block at other offsets, fresh
 * buffers, direct and heap in turn) must still be read and written where
 * they are.
 */
class DirectBufferAddressTest {
    @Test
    void changingBuffersAreReadAndWrittenWhereTheyAre() throws Exception {
        EnginePair p = new EnginePair(Contexts.client(Contexts.TLSBRIDGE),
                Contexts.server(Contexts.TLSBRIDGE, "ec"), true);
        p.handshake();
        int net = p.client.getSession().getPacketBufferSize();
        int app = p.server.getSession().getApplicationBufferSize();
        ByteBuffer srcBlock = ByteBuffer.allocateDirect(4 * 1024);
        ByteBuffer netBlock = ByteBuffer.allocateDirect(4 * net);
        ByteBuffer appBlock = ByteBuffer.allocateDirect(4 * app);
        for (int i = 0; i < 24; i++) {
            int k = i % 4;
            byte[] data = new byte[700 + i];
            for (int j = 0; j < data.length; j++) {
                data[j] = (byte) (i * 31 + j);
            }
            ByteBuffer src = i % 6 == 5 ? ByteBuffer.wrap(data) : slice(srcBlock, k * 1024, 1024);
            if (src.isDirect()) {
                src.put(data).flip();
            }
            ByteBuffer out = i % 5 == 4 ? ByteBuffer.allocate(net) : slice(netBlock, ((k + 1) % 4) * net, net);
            SSLEngineResult w = p.client.wrap(src, out);
            assertEquals(data.length, w.bytesConsumed());
            out.flip();
            ByteBuffer in = i % 7 == 6 ? ByteBuffer.allocateDirect(out.remaining()).put(out).flip() : out;
            ByteBuffer dst = i % 4 == 3 ? ByteBuffer.allocate(app) : slice(appBlock, ((k + 2) % 4) * app, app);
            SSLEngineResult u = p.server.unwrap(in, dst);
            assertEquals(data.length, u.bytesProduced(), "round " + i);
            byte[] got = new byte[data.length];
            dst.flip().get(got);
            assertArrayEquals(data, got, "round " + i);
        }
    }

    private static ByteBuffer slice(ByteBuffer block, int at, int len) {
        return block.duplicate().position(at).limit(at + len).slice();
    }
}
