package org.tlsbridge.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.Provider;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.SSLEngineResult.Status;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.tlsbridge.features.OpensslPeers;
import org.tlsbridge.test.Contexts;
import org.tlsbridge.test.EnginePair;
import org.tlsbridge.test.Processes;
import org.tlsbridge.test.TestPki;

/**
 * beginHandshake() on an established TLS 1.3 engine, startHandshake() on an
 * established TLS 1.3 socket: a KeyUpdate asking the peer for one back, as
 * SunJSSE sends (the engine says NEED_WRAP, the wrap that sends it FINISHED;
 * the peer's unwrap NEED_WRAP, its answering wrap FINISHED). TLS 1.2 keeps
 * refusing renegotiation (SunJSSE renegotiates; docs/security.md).
 */
@Timeout(120)
class LocalKeyUpdateTest {
    private static final TestPki PKI = TestPki.get();

    private static Provider provider(String name) {
        return "SunJSSE".equals(name) ? Contexts.sun() : Contexts.TLSBRIDGE;
    }

    /** The statuses one key update goes through, initiator first: what the caller of each call sees. */
    private static List<String> keyUpdate(EnginePair p, SSLEngine from) throws SSLException {
        SSLEngine to = from == p.client ? p.server : p.client;
        List<String> seen = new ArrayList<>();
        ByteBuffer empty = ByteBuffer.allocate(0);
        ByteBuffer net = ByteBuffer.allocate(from.getSession().getPacketBufferSize());
        ByteBuffer app = ByteBuffer.allocate(to.getSession().getApplicationBufferSize());
        from.beginHandshake();
        seen.add("begin " + from.getHandshakeStatus());
        SSLEngineResult r = from.wrap(empty, net);
        seen.add("wrap " + r.getStatus() + " " + r.getHandshakeStatus() + (r.bytesProduced() > 0 ? " +" : " 0"));
        seen.add("after " + from.getHandshakeStatus());
        net.flip();
        r = to.unwrap(net, app);
        seen.add("peer unwrap " + r.getStatus() + " " + r.getHandshakeStatus() + " " + r.bytesProduced());
        assertEquals(0, net.remaining(), "the KeyUpdate read whole");
        net.clear();
        r = to.wrap(empty, net);
        seen.add("peer wrap " + r.getStatus() + " " + r.getHandshakeStatus()
                + (r.bytesProduced() > 0 ? " +" : " 0"));
        seen.add("peer after " + to.getHandshakeStatus());
        net.flip();
        r = from.unwrap(net, app);
        // SunJSSE reports the answer's arrival as FINISHED too; tlsbridge's handshake ended with its wrap
        assertTrue(r.getStatus() == Status.OK && r.bytesProduced() == 0
                && (r.getHandshakeStatus() == HandshakeStatus.FINISHED
                        || r.getHandshakeStatus() == HandshakeStatus.NOT_HANDSHAKING), r.toString());
        assertEquals(HandshakeStatus.NOT_HANDSHAKING, from.getHandshakeStatus());
        return seen;
    }

    private static final List<String> SUN_STEPS = List.of("begin NEED_WRAP", "wrap OK FINISHED +",
            "after NOT_HANDSHAKING", "peer unwrap OK NEED_WRAP 0", "peer wrap OK FINISHED +",
            "peer after NOT_HANDSHAKING");

    @ParameterizedTest(name = "client {0}, server {1}, {2} asks")
    @CsvSource({
        "TLSBridge, TLSBridge, client", "TLSBridge, TLSBridge, server",
        "TLSBridge, SunJSSE, client", "TLSBridge, SunJSSE, server",
        "SunJSSE, TLSBridge, client", "SunJSSE, TLSBridge, server",
        "SunJSSE, SunJSSE, client", "SunJSSE, SunJSSE, server"})
    void engineKeyUpdateGoesAsSunJsseReportsIt(String client, String server, String asks) throws Exception {
        EnginePair p = new EnginePair(Contexts.client(provider(client)), Contexts.server(provider(server), "rsa"),
                false);
        for (SSLEngine e : new SSLEngine[] {p.client, p.server}) {
            e.setEnabledProtocols(new String[] {"TLSv1.3"});
        }
        p.handshake();
        byte[] hello = "before".getBytes(StandardCharsets.US_ASCII);
        assertArrayEquals(hello, p.send(p.client, hello)); // the server's tickets are out of the way
        assertArrayEquals(hello, p.send(p.server, hello));
        SSLEngine from = "client".equals(asks) ? p.client : p.server;
        for (int i = 0; i < 3; i++) {
            assertEquals(SUN_STEPS, keyUpdate(p, from), "key update " + i);
            byte[] msg = ("after key update " + i).getBytes(StandardCharsets.US_ASCII);
            assertArrayEquals(msg, p.send(p.client, msg), "client to server on the new keys");
            assertArrayEquals(msg, p.send(p.server, msg), "server to client on the new keys");
        }
    }

    /** ConnectionTest's order: both wrap, then both unwrap, until neither handshakes; each says FINISHED once. */
    @Test
    void serverKeyUpdateInConnectionTestOrder() throws Exception {
        EnginePair p = new EnginePair(Contexts.client(Contexts.TLSBRIDGE), Contexts.server(Contexts.TLSBRIDGE, "rsa"),
                false, "hostname", 77);
        for (SSLEngine e : new SSLEngine[] {p.client, p.server}) {
            e.setEnabledProtocols(new String[] {"TLSv1.3"});
        }
        p.handshake();
        p.send(p.client, new byte[5]);
        p.send(p.server, new byte[5]);
        p.server.getSession().invalidate();
        p.server.beginHandshake();
        assertThrows(IllegalArgumentException.class, () -> p.server.setUseClientMode(true));
        ByteBuffer c2s = ByteBuffer.allocate(p.client.getSession().getPacketBufferSize());
        ByteBuffer s2c = ByteBuffer.allocate(p.server.getSession().getPacketBufferSize());
        ByteBuffer in = ByteBuffer.allocate(p.client.getSession().getApplicationBufferSize());
        ByteBuffer empty = ByteBuffer.allocate(0);
        int clientDone = 0;
        int serverDone = 0;
        for (int round = 0; round < 10 && (p.client.getHandshakeStatus() != HandshakeStatus.NOT_HANDSHAKING
                || p.server.getHandshakeStatus() != HandshakeStatus.NOT_HANDSHAKING); round++) {
            clientDone += finished(p.client.wrap(empty, c2s));
            serverDone += finished(p.server.wrap(empty, s2c));
            c2s.flip();
            s2c.flip();
            in.clear();
            clientDone += finished(p.client.unwrap(s2c, in));
            in.clear();
            serverDone += finished(p.server.unwrap(c2s, in));
            c2s.compact();
            s2c.compact();
        }
        assertEquals(HandshakeStatus.NOT_HANDSHAKING, p.client.getHandshakeStatus());
        assertEquals(HandshakeStatus.NOT_HANDSHAKING, p.server.getHandshakeStatus());
        assertEquals(1, clientDone, "client FINISHED");
        assertEquals(1, serverDone, "server FINISHED");
        assertArrayEquals(new byte[] {1, 2, 3}, p.send(p.client, new byte[] {1, 2, 3}));
        assertArrayEquals(new byte[] {4, 5, 6}, p.send(p.server, new byte[] {4, 5, 6}));
    }

    private static int finished(SSLEngineResult r) {
        // an unwrap of nothing underflows, as ConnectionTest lets it
        assertTrue(r.getStatus() == Status.OK || r.getStatus() == Status.BUFFER_UNDERFLOW && r.bytesConsumed() == 0,
                r.toString());
        return r.getHandshakeStatus() == HandshakeStatus.FINISHED ? 1 : 0;
    }

    @Test
    void tls12RenegotiationStaysRefused() throws Exception {
        EnginePair p = new EnginePair(Contexts.client(Contexts.TLSBRIDGE), Contexts.server(Contexts.TLSBRIDGE, "rsa"),
                false);
        p.client.setEnabledProtocols(new String[] {"TLSv1.2"});
        p.handshake();
        SSLException x = assertThrows(SSLException.class, p.client::beginHandshake);
        assertTrue(x.getMessage().contains("renegotiation"), x.getMessage());
    }

    /**
     * startHandshake() on an established TLS 1.3 socket puts a KeyUpdate on
     * the wire before it returns, with no write after it: openssl s_server
     * -msg prints it, and the data that follows is read with the new keys.
     */
    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"TLSBridge, native", "TLSBridge, layered", "SunJSSE, native"})
    void socketStartHandshakeSendsKeyUpdate(String provider, String kind) throws Exception {
        int port = Processes.freePort();
        try (Processes.Child server = Processes.start(PKI.dir, "stdbuf", "-oL", OpensslPeers.openssl35(),
                "s_server", "-accept", "127.0.0.1:" + port, "-cert", "rsa.pem", "-key", "rsa.key", "-tls1_3",
                "-msg", "-naccept", "1")) {
            assertTrue(server.await("ACCEPT", 10_000), server.output());
            SSLContext ctx = Contexts.client(provider(provider));
            SSLSocket s = "native".equals(kind) ? (SSLSocket) ctx.getSocketFactory().createSocket("localhost", port)
                    : (SSLSocket) ctx.getSocketFactory().createSocket(
                            new Socket(InetAddress.getLoopbackAddress(), port), "localhost", port, true);
            try (SSLSocket c = s) {
                c.setSoTimeout(10_000);
                c.startHandshake();
                assertEquals("TLSv1.3", c.getSession().getProtocol());
                int before = count(server.output(), "KeyUpdate");
                c.startHandshake();
                long end = System.currentTimeMillis() + 5000;
                while (count(server.output(), "KeyUpdate") <= before && System.currentTimeMillis() < end) {
                    Thread.sleep(10);
                }
                assertTrue(count(server.output(), "KeyUpdate") > before,
                        "no KeyUpdate reached s_server:\n" + server.output());
                OutputStream o = c.getOutputStream();
                o.write("data on the new keys\n".getBytes(StandardCharsets.US_ASCII));
                o.flush();
                assertTrue(server.await("data on the new keys", 5000), server.output());
                // s_server answered with a KeyUpdate of its own; reading through it keeps the socket usable
                server.process.getOutputStream().write("back\n".getBytes(StandardCharsets.US_ASCII));
                server.process.getOutputStream().flush();
                InputStream in = c.getInputStream();
                byte[] b = in.readNBytes(5);
                assertEquals("back\n", new String(b, StandardCharsets.US_ASCII));
            }
        }
    }

    private static int count(String s, String what) {
        int n = 0;
        for (int i = s.indexOf(what); i >= 0; i = s.indexOf(what, i + 1)) {
            n++;
        }
        return n;
    }
}
