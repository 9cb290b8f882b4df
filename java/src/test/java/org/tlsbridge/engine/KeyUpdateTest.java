package org.tlsbridge.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.tlsbridge.test.Contexts;
import org.tlsbridge.test.EngineChannel;
import org.tlsbridge.test.Processes;
import org.tlsbridge.test.TestPki;

/**
 * Regression: openssl s_server sends several TLS 1.3 KeyUpdates in a row,
 * each asking for one back (its stdin command "K"), then data. tlsbridge
 * must read through them, answer, and keep reading and writing; an earlier
 * version stalled in unwrap after stacked KeyUpdates.
 */
@Timeout(60) // a stall must fail, not hang: channel reads have no SO_TIMEOUT
class KeyUpdateTest {
    private static final TestPki PKI = TestPki.get();
    private static final int UPDATES = 5;

    private interface Peer {
        void write(byte[] b) throws Exception;

        /** Reads exactly n bytes. */
        byte[] read(int n) throws Exception;
    }

    private static Processes.Child sServer(int port) throws Exception {
        // no -quiet: s_server takes stdin commands ("K") only when it talks;
        // stdbuf: its notes go through stdio, block-buffered into a pipe
        Processes.Child c = Processes.start(PKI.dir, "stdbuf", "-oL", "openssl", "s_server", "-accept", "127.0.0.1:" + port,
                "-cert", "ec.pem", "-key", "ec.key", "-tls1_3", "-naccept", "1");
        assertTrue(c.await("ACCEPT", 10_000), c.output());
        return c;
    }

    /** Stacked updates then a line from the server; a line back; three rounds. */
    private static void talk(Processes.Child server, Peer peer) throws Exception {
        OutputStream stdin = server.process.getOutputStream();
        for (int round = 0; round < 3; round++) {
            int before = count(server.output(), "SSL_do_handshake -> 1");
            for (int i = 0; i < UPDATES; i++) {
                stdin.write("K\n".getBytes(StandardCharsets.US_ASCII));
                stdin.flush();
                // one command per read: s_server looks at the first byte of what it read
                long end = System.currentTimeMillis() + 5000;
                while (count(server.output(), "SSL_do_handshake -> 1") < before + i + 1
                        && System.currentTimeMillis() < end) {
                    Thread.sleep(5);
                }
            }
            assertEquals(before + UPDATES, count(server.output(), "SSL_do_handshake -> 1"), server.output());
            String line = "data after " + UPDATES + " key updates, round " + round + "\n";
            stdin.write(line.getBytes(StandardCharsets.US_ASCII));
            stdin.flush();
            assertEquals(line, new String(peer.read(line.length()), StandardCharsets.US_ASCII), server.output());
            String back = "client still writes, round " + round;
            peer.write((back + "\n").getBytes(StandardCharsets.US_ASCII));
            long end = System.currentTimeMillis() + 10_000;
            while (!server.output().contains(back) && System.currentTimeMillis() < end) {
                Thread.sleep(10);
            }
            assertTrue(server.output().contains(back), server.output());
        }
    }

    private static int count(String s, String what) {
        int n = 0;
        for (int i = s.indexOf(what); i >= 0; i = s.indexOf(what, i + 1)) {
            n++;
        }
        return n;
    }

    @Test
    void socketReadsAndWritesThroughStackedKeyUpdates() throws Exception {
        int port = Processes.freePort();
        try (Processes.Child server = sServer(port);
                SSLSocket s = (SSLSocket) Contexts.client(Contexts.TLSBRIDGE).getSocketFactory()
                        .createSocket("localhost", port)) {
            s.setSoTimeout(10_000);
            s.startHandshake();
            assertEquals("TLSv1.3", s.getSession().getProtocol());
            InputStream in = s.getInputStream();
            OutputStream out = s.getOutputStream();
            talk(server, new Peer() {
                @Override
                public void write(byte[] b) throws Exception {
                    out.write(b);
                    out.flush();
                }

                @Override
                public byte[] read(int n) throws Exception {
                    byte[] b = in.readNBytes(n);
                    assertEquals(n, b.length, "EOF after " + b.length + " bytes");
                    return b;
                }
            });
        }
    }

    @Test
    void engineReadsAndWritesThroughStackedKeyUpdates() throws Exception {
        int port = Processes.freePort();
        try (Processes.Child server = sServer(port)) {
            SSLEngine e = Contexts.client(Contexts.TLSBRIDGE).createSSLEngine("localhost", port);
            e.setUseClientMode(true);
            SocketChannel ch = SocketChannel.open(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            try (EngineChannel c = new EngineChannel(e, ch, true)) {
                c.handshake();
                assertEquals("TLSv1.3", e.getSession().getProtocol());
                talk(server, new Peer() {
                    @Override
                    public void write(byte[] b) throws Exception {
                        c.write(b);
                    }

                    @Override
                    public byte[] read(int n) throws Exception {
                        byte[] b = c.read(n);
                        assertEquals(n, b.length, "EOF after " + b.length + " bytes");
                        return b;
                    }
                });
            }
        }
    }
}
