package org.tlsbridge.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.SSLEngineResult.Status;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.tlsbridge.internal.Diagnostics;
import org.tlsbridge.test.Contexts;
import org.tlsbridge.test.TestPki;

/**
 * What one new connection costs a server engine driven as Tomcat drives it:
 * full handshake, one request and response, then closeOutbound and the
 * close_notify wrapped, and never closeInbound (Tomcat closes the socket
 * without waiting for the client's close_notify), so the native SSL is left
 * to the Cleaner. Counted, not timed: the Java heap the server engine's own
 * calls allocate per connection (the client's are not counted).
 */
class ServerConnectionCostTest {
    private static final int ROUNDS = 200;

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"rsa, TLSv1.3", "ec, TLSv1.3", "rsa, TLSv1.2", "ec, TLSv1.2"})
    void newConnection(String key, String protocol) throws Exception {
        TestPki pki = TestPki.get();
        // Tomcat's own key manager: SunX509 (the JDK's default algorithm), which
        // holds the key and chain decrypted; NewSunX509 would decrypt the
        // PKCS#12 entry on every call and swamp what the engine allocates
        KeyManagerFactory kmf = KeyManagerFactory.getInstance("SunX509");
        kmf.init(pki.keyStore(key), TestPki.PASSWORD);
        SSLContext server = Contexts.create(Contexts.TLSBRIDGE, "TLS", kmf.getKeyManagers(), null);
        SSLContext client = Contexts.create(Contexts.TLSBRIDGE, "TLS", null, pki.trustManagers());
        List<SSLEngine> closed = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            connection(client, server, protocol, new long[1], closed);
        }
        closed.clear();
        long base = settle();
        long[] serverBytes = new long[1];
        for (int i = 0; i < ROUNDS; i++) {
            connection(client, server, protocol, serverBytes, closed);
        }
        // every server engine is still alive: closed outbound only, referenced
        assertEquals(base + ROUNDS, Diagnostics.liveConnections());
        long perConnection = serverBytes[0] / ROUNDS;
        System.out.println("ServerConnectionCostTest " + key + " " + protocol + ": " + perConnection
                + " Java bytes allocated by the server engine per connection");
        for (SSLEngine e : closed) {
            assertTrue(e.isOutboundDone());
            assertTrue(!e.isInboundDone(), "inbound stays open after Tomcat's close, as under SunJSSE");
        }
        // 3.8-3.9 KB in 2026-12 (4.2-4.3 KB while the peer's signature
        // schemes were converted on every learn): the engine, its handshaker
        // and session, a few strings and arrays from OpenSSL
        assertTrue(perConnection < 4096, "server engine allocations per connection: " + perConnection);
    }

    private static void connection(SSLContext clientCtx, SSLContext serverCtx, String protocol, long[] serverBytes,
            List<SSLEngine> closed) throws Exception {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long tid = Thread.currentThread().getId();
        // no peer host: the client caches no session, every handshake is full
        SSLEngine c = clientCtx.createSSLEngine();
        c.setUseClientMode(true);
        c.setEnabledProtocols(new String[] {protocol});
        long t0 = mx.getThreadAllocatedBytes(tid);
        SSLEngine s = serverCtx.createSSLEngine();
        s.setUseClientMode(false);
        s.beginHandshake();
        serverBytes[0] += mx.getThreadAllocatedBytes(tid) - t0;
        ByteBuffer c2s = ByteBuffer.allocate(64 * 1024);
        ByteBuffer s2c = ByteBuffer.allocate(64 * 1024);
        ByteBuffer capp = ByteBuffer.allocate(32 * 1024);
        ByteBuffer sapp = ByteBuffer.allocate(32 * 1024);
        ByteBuffer empty = ByteBuffer.allocate(0);
        c.beginHandshake();
        for (int i = 0; i < 100 && (busy(c) || busy(s)); i++) {
            step(c, c2s, s2c, capp, empty, null);
            step(s, s2c, c2s, sapp, empty, serverBytes);
        }
        assertEquals(HandshakeStatus.NOT_HANDSHAKING, s.getHandshakeStatus());
        assertEquals(protocol, s.getSession().getProtocol());
        assertTrue(!((TlsBridgeSession) s.getSession()).resumed, "a full handshake");
        assertTrue(((javax.net.ssl.ExtendedSSLSession) s.getSession()).getPeerSupportedSignatureAlgorithms().length > 0,
                "the client's signature schemes");
        // a request and its response
        ByteBuffer req = ByteBuffer.wrap("GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes());
        assertEquals(Status.OK, c.wrap(req, c2s).getStatus());
        c2s.flip();
        t0 = mx.getThreadAllocatedBytes(tid);
        while (c2s.hasRemaining()) {
            s.unwrap(c2s, sapp);
        }
        c2s.clear();
        assertEquals(Status.OK, s.wrap(ByteBuffer.allocate(1024), s2c).getStatus());
        // Tomcat's close: closeOutbound, the close_notify wrapped, the socket closed
        s.closeOutbound();
        SSLEngineResult r = s.wrap(empty, s2c);
        serverBytes[0] += mx.getThreadAllocatedBytes(tid) - t0;
        assertEquals(Status.CLOSED, r.getStatus());
        assertTrue(s.isOutboundDone());
        // the client reads the response and the close_notify, and closes fully
        s2c.flip();
        List<String> seen = new ArrayList<>();
        Status st = Status.OK;
        while (st == Status.OK && s2c.hasRemaining()) {
            capp.clear();
            SSLEngineResult u = c.unwrap(s2c, capp);
            seen.add(u.toString().replace('\n', ' '));
            st = u.getStatus();
        }
        assertTrue(c.isInboundDone(), seen.toString());
        c.closeOutbound();
        s2c.clear();
        c.wrap(empty, s2c);
        assertTrue(c.isInboundDone() && c.isOutboundDone());
        closed.add(s);
    }

    /** Collects until the Cleaner has freed the warm-up's SSLs; how many other tests left alive. */
    private static long settle() throws InterruptedException {
        long live = Diagnostics.liveConnections();
        for (int i = 0, same = 0; i < 200 && live > 0 && same < 20; i++) {
            System.gc();
            Thread.sleep(10);
            long now = Diagnostics.liveConnections();
            same = now == live ? same + 1 : 0;
            live = now;
        }
        return live;
    }

    private static boolean busy(SSLEngine e) {
        HandshakeStatus h = e.getHandshakeStatus();
        return h != HandshakeStatus.NOT_HANDSHAKING && h != HandshakeStatus.FINISHED;
    }

    private static void step(SSLEngine e, ByteBuffer out, ByteBuffer in, ByteBuffer app, ByteBuffer empty,
            long[] bytes) throws Exception {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long tid = Thread.currentThread().getId();
        long t0 = mx.getThreadAllocatedBytes(tid);
        HandshakeStatus hs = e.getHandshakeStatus();
        if (hs == HandshakeStatus.NEED_TASK) {
            Runnable t;
            while ((t = e.getDelegatedTask()) != null) {
                t.run();
            }
        } else if (hs == HandshakeStatus.NEED_WRAP) {
            e.wrap(empty, out);
        } else if (hs == HandshakeStatus.NEED_UNWRAP) {
            in.flip();
            if (in.hasRemaining()) {
                e.unwrap(in, app);
            }
            in.compact();
        }
        if (bytes != null) {
            bytes[0] += mx.getThreadAllocatedBytes(tid) - t0;
        }
    }
}
