package org.tlsbridge.socket;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.Test;
import org.tlsbridge.test.Contexts;

/**
 * The native socket reads ahead (one read(2) takes every record the kernel holds) and polls
 * before reading only when OpenSSL holds nothing: records that arrived together must come out of
 * read() without a wait, available() must count the decrypted rest of a record, and SO_TIMEOUT
 * must still fire when nothing is held. The peer is SunJSSE's SSLEngine over a plain socket, so
 * two records can be put into one write.
 */
class SocketReadAheadTest {
    private static final InetAddress LO = InetAddress.getLoopbackAddress();

    @Test
    void recordsThatArriveTogetherAreReadWithoutWaiting() throws Exception {
        CountDownLatch done = new CountDownLatch(1);
        try (SSLServerSocket server = (SSLServerSocket) Contexts.server(Contexts.TLSBRIDGE, "rsa")
                .getServerSocketFactory().createServerSocket(0, 50, LO)) {
            Future<Void> peer = SocketBehaviourTest.POOL.submit(() -> {
                try (Socket raw = new Socket(LO, server.getLocalPort())) {
                    SSLEngine e = Contexts.client(Contexts.sun()).createSSLEngine("localhost", server.getLocalPort());
                    e.setUseClientMode(true);
                    EnginePeer p = new EnginePeer(e, raw);
                    p.handshake();
                    p.wrap(ByteBuffer.wrap("first".getBytes(StandardCharsets.US_ASCII)));
                    p.wrap(ByteBuffer.wrap("second".getBytes(StandardCharsets.US_ASCII)));
                    p.flush(); // both records, one write
                    assertTrue(done.await(30, TimeUnit.SECONDS));
                }
                return null;
            });
            try (SSLSocket s = (SSLSocket) server.accept()) {
                s.setSoTimeout(5000);
                s.startHandshake();
                InputStream in = s.getInputStream();
                byte[] b = new byte[16];
                assertEquals("fir", new String(b, 0, in.read(b, 0, 3), StandardCharsets.US_ASCII));
                assertEquals(2, in.available());
                assertEquals("st", new String(b, 0, in.read(b, 0, 16), StandardCharsets.US_ASCII));
                // "second" is held now (by the socket or OpenSSL), not in the kernel: no poll may wait for it
                long t0 = System.nanoTime();
                assertEquals("second", new String(b, 0, in.read(b, 0, 16), StandardCharsets.US_ASCII));
                assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(2), "read waited for held bytes");
                s.setSoTimeout(200);
                t0 = System.nanoTime();
                assertThrows(SocketTimeoutException.class, () -> in.read(b));
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
                assertTrue(ms >= 190 && ms < 5000, "timed out after " + ms + " ms");
            } finally {
                done.countDown();
            }
            peer.get(30, TimeUnit.SECONDS);
        }
    }
}
