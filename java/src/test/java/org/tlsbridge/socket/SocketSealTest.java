package org.tlsbridge.socket;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.DataInputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.tlsbridge.test.Contexts;

/**
 * What a native server socket sends once it seals its records itself (where OpenSSL hands it the
 * sending keys: the bundled OpenSSL), and what it receives around a change of keys, against
 * SunJSSE's SSLEngine over a plain socket, which puts records together into one write(2) where
 * the test says. With the seal switched off the same exchanges run on OpenSSL's record layer.
 */
class SocketSealTest {
    private static final InetAddress LO = InetAddress.getLoopbackAddress();
    private static final int BULK = 4 << 20;

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    private static byte[] bulk() {
        byte[] b = new byte[BULK];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) (i * 7 + (i >>> 13) + 3);
        }
        return b;
    }

    /**
     * The client's KeyUpdate and the record after it arrive in one segment (OpenSSL 3.5, reading
     * ahead itself while offering keys to the BIO, lost that record); then the server's own
     * KeyUpdate and reply; then a write far larger than the 4 KiB send buffer takes at once,
     * which must arrive whole and in order before the write returns to the caller.
     */
    @ParameterizedTest
    @ValueSource(strings = {"TLSv1.3", "TLSv1.2", "TLSv1.3 seal=false"})
    void keyUpdatesAndLongWrites(String how) throws Exception {
        String protocol = how.split(" ")[0];
        boolean tls13 = protocol.equals("TLSv1.3");
        SSLContext ctx = how.endsWith("seal=false")
                ? Contexts.serverWith("tlsbridge.seal", "false", "rsa")
                : Contexts.server(Contexts.TLSBRIDGE, "rsa");
        byte[] big = bulk();
        try (SSLServerSocket server = (SSLServerSocket) ctx.getServerSocketFactory().createServerSocket(0, 50, LO)) {
            Future<byte[]> peer = SocketBehaviourTest.POOL.submit(() -> {
                try (Socket raw = new Socket(LO, server.getLocalPort())) {
                    SSLEngine e = Contexts.client(Contexts.sun()).createSSLEngine("localhost", server.getLocalPort());
                    e.setUseClientMode(true);
                    e.setEnabledProtocols(new String[] {protocol});
                    EnginePeer p = new EnginePeer(e, raw);
                    p.handshake();
                    p.wrap(ByteBuffer.wrap(ascii("ping")));
                    if (tls13) {
                        e.beginHandshake(); // a KeyUpdate, then the next record under the new key
                    }
                    p.wrap(ByteBuffer.wrap(ascii("after the update")));
                    p.flush();
                    byte[] pong = new byte[4];
                    p.readFully(pong, 0, 4);
                    assertEquals("pong", new String(pong, StandardCharsets.US_ASCII));
                    Thread.sleep(200); // the server's long write fills the kernel's buffers meanwhile
                    byte[] got = new byte[BULK];
                    p.readFully(got, 0, BULK);
                    p.wrap(ByteBuffer.wrap(ascii("bye")));
                    p.flush();
                    return got;
                }
            });
            try (SSLSocket s = (SSLSocket) server.accept()) {
                s.setSoTimeout(10_000);
                s.setSendBufferSize(4096);
                s.startHandshake();
                assertEquals(protocol, s.getSession().getProtocol());
                DataInputStream in = new DataInputStream(s.getInputStream());
                OutputStream out = s.getOutputStream();
                byte[] b = new byte[16];
                in.readFully(b, 0, 4);
                assertEquals("ping", new String(b, 0, 4, StandardCharsets.US_ASCII));
                in.readFully(b, 0, 16);
                assertEquals("after the update", new String(b, StandardCharsets.US_ASCII));
                if (tls13) {
                    s.startHandshake(); // the server's KeyUpdate, asking for the client's
                }
                out.write(ascii("pong"));
                out.write(big);
                out.flush();
                in.readFully(b, 0, 3);
                assertEquals("bye", new String(b, 0, 3, StandardCharsets.US_ASCII));
            }
            assertArrayEquals(big, peer.get(60, TimeUnit.SECONDS));
        }
    }
}
