package org.tlsbridge.engine;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLSocket;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.SSLEngineResult.Status;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.tlsbridge.test.Contexts;
import org.tlsbridge.test.OneShotServer;

/**
 * A SunJSSE client (the JDK running the test: 17 or 25) closes its side at
 * every point of a TLS 1.3 or 1.2 connection, with the server's record
 * sealing on and off; the tlsbridge server's unwrap must take the close as
 * a close (CLOSED, or the handshake simply ending), never throw, and answer
 * with its own close_notify where the handshake is done.
 */
class PeerCloseTest {
    /** Where the client closes: after this many of its steps, or once the handshake and data are done. */
    static List<Object[]> points() {
        List<Object[]> l = new ArrayList<>();
        for (String proto : new String[] {"TLSv1.3", "TLSv1.2"}) {
            for (boolean seal : new boolean[] {true, false}) {
                for (int step = 0; step <= 8; step++) {
                    l.add(new Object[] {proto, seal, step, false});
                }
                l.add(new Object[] {proto, seal, 99, false});
                l.add(new Object[] {proto, seal, 99, true});
            }
        }
        return l;
    }

    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

    /**
     * Runs the pair step by step; after `closeAt` client steps (or after the
     * handshake and a request, with 99) the client closes its outbound side
     * (and its inbound, with alsoInbound), then both go on until neither
     * moves. Every server call must not throw.
     */
    @ParameterizedTest(name = "{0} seal={1} close after step {2} inbound too {3}")
    @MethodSource("points")
    void clientCloses(String proto, boolean seal, int closeAt, boolean alsoInbound) throws Exception {
        SSLContext sctx = Contexts.serverWith("tlsbridge.seal", Boolean.toString(seal), "ec");
        SSLContext cctx = Contexts.client(Contexts.sun());
        SSLEngine client = cctx.createSSLEngine("localhost", 443);
        client.setUseClientMode(true);
        client.setEnabledProtocols(new String[] {proto});
        SSLEngine server = sctx.createSSLEngine();
        server.setUseClientMode(false);
        ByteBuffer c2s = ByteBuffer.allocate(1 << 17);
        ByteBuffer s2c = ByteBuffer.allocate(1 << 17);
        ByteBuffer capp = ByteBuffer.allocate(1 << 16);
        ByteBuffer sapp = ByteBuffer.allocate(1 << 16);
        ByteBuffer request = ByteBuffer.wrap("GET / HTTP/1.1\r\n\r\n".getBytes());
        boolean closed = false;
        int clientSteps = 0;
        boolean serverSawClose = false;
        client.beginHandshake();
        server.beginHandshake();
        for (int round = 0; round < 200; round++) {
            boolean moved = false;
            // the client
            if (!closed && (closeAt != 99 && clientSteps >= closeAt
                    || closeAt == 99 && client.getHandshakeStatus() == HandshakeStatus.NOT_HANDSHAKING
                            && !request.hasRemaining() && sapp.position() > 0)) {
                client.closeOutbound();
                if (alsoInbound) {
                    try {
                        client.closeInbound();
                    } catch (SSLException expected) {
                        // SunJSSE: inbound closed before receiving the peer's close_notify
                    }
                }
                closed = true;
                moved = true;
            }
            moved |= side(client, c2s, s2c, capp, closed ? EMPTY : request, false);
            clientSteps++;
            // the server: every call must succeed
            boolean handshaking = server.getHandshakeStatus() != HandshakeStatus.NOT_HANDSHAKING;
            try {
                moved |= side(server, s2c, c2s, sapp, EMPTY, true);
            } catch (SSLHandshakeException e) {
                // a close before the handshake ends aborts it, as SunJSSE's server reports it too
                if (!handshaking || !closed || !e.getMessage().contains("close_notify during the handshake")) {
                    fail("server failed after the client closed at step " + closeAt + " (" + proto + ", seal "
                            + seal + "): " + e, e);
                }
                break;
            } catch (SSLException e) {
                fail("server failed after the client closed at step " + closeAt + " (" + proto + ", seal " + seal
                        + "): " + e, e);
            }
            if (server.isInboundDone()) {
                serverSawClose = true;
            }
            if (!moved && closed && server.isOutboundDone()) {
                break;
            }
        }
        assertTrue(closed, "the client closed");
        if (serverSawClose) {
            assertTrue(server.isOutboundDone(), "the server answered the close");
        }
    }

    static List<Object[]> socketPoints() {
        List<Object[]> l = new ArrayList<>();
        for (String proto : new String[] {"TLSv1.3", "TLSv1.2"}) {
            for (boolean seal : new boolean[] {true, false}) {
                for (int point = 0; point < 4; point++) {
                    l.add(new Object[] {proto, seal, point});
                }
            }
        }
        return l;
    }

    /**
     * A SunJSSE SSLSocket client closes the socket (TLS 1.3: user_canceled,
     * then close_notify) after the handshake (0), after its request (1),
     * after reading the reply (2), or shuts its output down after the
     * request and reads the reply (3); the server engine reads to the end
     * without an exception.
     */
    @ParameterizedTest(name = "{0} seal={1} socket close at {2}")
    @MethodSource("socketPoints")
    void socketClientCloses(String proto, boolean seal, int point) throws Exception {
        SSLContext sctx = Contexts.serverWith("tlsbridge.seal", Boolean.toString(seal), "ec");
        SSLContext cctx = Contexts.client(Contexts.sun());
        byte[] request = "GET / HTTP/1.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
        byte[] reply = new byte[5000];
        try (OneShotServer srv = new OneShotServer()) {
            CompletableFuture<Void> done = srv.serve(sctx, 1, false, null, c -> {
                byte[] got = c.read(request.length);
                if (got.length == request.length && !c.engine.isOutboundDone()) {
                    try {
                        c.write(reply);
                    } catch (java.io.IOException closedMeanwhile) {
                        // the client may close before the reply: only reading is checked
                    }
                }
                c.readAll();
            });
            try (SSLSocket s = (SSLSocket) cctx.getSocketFactory().createSocket("127.0.0.1", srv.port)) {
                s.setEnabledProtocols(new String[] {proto});
                s.startHandshake();
                if (point >= 1) {
                    s.getOutputStream().write(request);
                    s.getOutputStream().flush();
                }
                if (point == 3) {
                    s.shutdownOutput();
                }
                if (point >= 2) {
                    int n = 0;
                    while (n < reply.length) {
                        int k = s.getInputStream().read(new byte[reply.length], 0, reply.length - n);
                        if (k < 0) {
                            break;
                        }
                        n += k;
                    }
                }
            }
            try {
                done.get(20, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                fail("server failed after a " + proto + " SSLSocket client closed at point " + point + " (seal " + seal
                        + "): " + e.getCause(), e.getCause());
            }
        }
    }

    /** One engine's turn: tasks, a wrap of app (or nothing), an unwrap of what came. */
    private static boolean side(SSLEngine e, ByteBuffer out, ByteBuffer in, ByteBuffer app, ByteBuffer data,
            boolean server) throws SSLException {
        boolean moved = false;
        Runnable t;
        while ((t = e.getDelegatedTask()) != null) {
            t.run();
            moved = true;
        }
        if (!e.isOutboundDone()) {
            SSLEngineResult w = e.wrap(data, out);
            moved |= w.bytesProduced() > 0 || w.bytesConsumed() > 0;
        }
        in.flip();
        try {
            while (in.hasRemaining() && !e.isInboundDone()) {
                SSLEngineResult u = e.unwrap(in, app);
                while ((t = e.getDelegatedTask()) != null) {
                    t.run();
                }
                moved |= u.bytesConsumed() > 0 || u.bytesProduced() > 0;
                if (u.getStatus() == Status.BUFFER_UNDERFLOW || u.bytesConsumed() == 0
                        || u.getStatus() == Status.CLOSED) {
                    break;
                }
            }
        } finally {
            in.compact();
        }
        return moved;
    }
}
