package org.tlsbridge.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.ByteBuffer;
import java.security.Provider;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.SSLEngineResult.Status;
import javax.net.ssl.SSLException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.tlsbridge.test.Contexts;

/**
 * The SSLEngine contract at the edges of a handshake: wrap produces whole
 * TLS records or nothing (BUFFER_OVERFLOW, 0 consumed, 0 produced), whatever
 * the destination's size, and a client's first unwrap starts the handshake.
 * SunJSSE runs the same checks as the reference.
 */
class HandshakeFramingTest {
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

    private static Provider provider(String name) {
        return "SunJSSE".equals(name) ? Contexts.sun() : Contexts.TLSBRIDGE;
    }

    /** Splits bytes from one wrap into TLS records; fails on anything that is not whole records. */
    static List<byte[]> records(byte[] b, String what) {
        List<byte[]> out = new ArrayList<>();
        int pos = 0;
        while (pos < b.length) {
            assertTrue(b.length - pos >= 5, what + ": " + (b.length - pos) + " bytes left, less than a record header");
            int type = b[pos] & 0xff;
            assertTrue(type >= 20 && type <= 23, what + ": content type " + type);
            assertEquals(3, b[pos + 1], what + ": record version major");
            int len = ((b[pos + 3] & 0xff) << 8) | (b[pos + 4] & 0xff);
            assertTrue(len <= 16384 + 320, what + ": record length " + len);
            assertTrue(pos + 5 + len <= b.length,
                    what + ": record of " + (5 + len) + " bytes cut at " + (b.length - pos));
            out.add(java.util.Arrays.copyOfRange(b, pos, pos + 5 + len));
            pos += 5 + len;
        }
        return out;
    }

    private static void runTasks(SSLEngine e) {
        Runnable t;
        while ((t = e.getDelegatedTask()) != null) {
            t.run();
        }
    }

    /**
     * Wraps into destinations of 1, 2, 3... bytes until something comes out:
     * every smaller one must be BUFFER_OVERFLOW with nothing consumed or
     * produced, and what comes out must be whole records. Returns the bytes.
     */
    private static byte[] probeWrap(SSLEngine e, boolean direct, String step) throws SSLException {
        for (int size = 1; size <= e.getSession().getPacketBufferSize(); size++) {
            ByteBuffer dst = direct ? ByteBuffer.allocateDirect(size) : ByteBuffer.allocate(size);
            SSLEngineResult r = e.wrap(EMPTY, dst);
            if (r.getStatus() == Status.BUFFER_OVERFLOW) {
                assertEquals(0, r.bytesConsumed(), step + " size " + size);
                assertEquals(0, r.bytesProduced(), step + " size " + size + ": " + r);
                assertEquals(0, dst.position(), step + " size " + size);
                continue;
            }
            assertEquals(r.bytesProduced(), dst.position(), step);
            byte[] out = new byte[r.bytesProduced()];
            dst.flip().get(out);
            records(out, step + " size " + size + " " + r);
            if (r.getHandshakeStatus() == HandshakeStatus.NEED_TASK) {
                runTasks(e);
            }
            return out;
        }
        fail(step + ": nothing fits in a packet-sized buffer");
        return null;
    }

    private static boolean unwrapAll(SSLEngine e, ByteBuffer in, ByteBuffer app) throws SSLException {
        boolean progress = false;
        in.flip();
        try {
            while (in.hasRemaining()) {
                SSLEngineResult r = e.unwrap(in, app);
                if (r.getHandshakeStatus() == HandshakeStatus.NEED_TASK) {
                    runTasks(e);
                }
                if (r.bytesConsumed() == 0) {
                    break;
                }
                progress = true;
            }
        } finally {
            in.compact();
        }
        return progress;
    }

    /**
     * Runs a handshake (with client authentication) where the probed side
     * wraps through probeWrap at every step, then closes it; the other side
     * wraps into big buffers.
     */
    private static void drive(SSLEngine probe, SSLEngine peer, boolean direct) throws SSLException {
        ByteBuffer toPeer = ByteBuffer.allocate(1 << 17);
        ByteBuffer toProbe = ByteBuffer.allocate(1 << 17);
        ByteBuffer app = ByteBuffer.allocate(1 << 16);
        int steps = 0;
        probe.beginHandshake();
        peer.beginHandshake();
        for (int i = 0; i < 200; i++) {
            boolean progress = false;
            HandshakeStatus hs = probe.getHandshakeStatus();
            if (hs == HandshakeStatus.NEED_TASK) {
                runTasks(probe);
                progress = true;
            } else if (hs == HandshakeStatus.NEED_WRAP) {
                byte[] out = probeWrap(probe, direct, "step " + steps++);
                toPeer.put(out);
                progress = true;
            }
            progress |= unwrapAll(probe, toProbe, app);
            hs = peer.getHandshakeStatus();
            if (hs == HandshakeStatus.NEED_TASK) {
                runTasks(peer);
                progress = true;
            } else if (hs == HandshakeStatus.NEED_WRAP) {
                SSLEngineResult r = peer.wrap(EMPTY, toProbe);
                progress |= r.bytesProduced() > 0;
                if (r.getHandshakeStatus() == HandshakeStatus.NEED_TASK) {
                    runTasks(peer);
                }
            }
            progress |= unwrapAll(peer, toPeer, app);
            if (!progress) {
                break;
            }
        }
        assertEquals(HandshakeStatus.NOT_HANDSHAKING, probe.getHandshakeStatus());
        assertEquals(HandshakeStatus.NOT_HANDSHAKING, peer.getHandshakeStatus());
        assertTrue(steps >= 2, "probed wraps: " + steps);
        // application data and close_notify: whole records too
        ByteBuffer big = ByteBuffer.allocate(100);
        for (int size = 1; size < 200; size++) {
            SSLEngineResult r = probe.wrap(big.duplicate(), ByteBuffer.allocate(size));
            if (r.getStatus() == Status.BUFFER_OVERFLOW) {
                assertEquals(0, r.bytesConsumed() + r.bytesProduced(), "data, size " + size);
            } else {
                assertEquals(Status.OK, r.getStatus());
                break;
            }
        }
        probe.closeOutbound();
        byte[] close = probeWrap(probe, direct, "close_notify");
        assertTrue(close.length > 0);
    }

    @ParameterizedTest(name = "{0} {1} probed as {2}, direct {3}")
    @CsvSource({"TLSBridge,TLSv1.3,client,true", "TLSBridge,TLSv1.3,client,false", "TLSBridge,TLSv1.3,server,true",
        "TLSBridge,TLSv1.3,server,false", "TLSBridge,TLSv1.2,client,false", "TLSBridge,TLSv1.2,server,true",
        "SunJSSE,TLSv1.3,client,false", "SunJSSE,TLSv1.3,server,false", "SunJSSE,TLSv1.2,client,false",
        "SunJSSE,TLSv1.2,server,false"})
    void wrapNeverEmitsAPartialRecord(String probed, String protocol, String role, boolean direct) throws Exception {
        // the peer is the other provider, so each side also meets a real implementation
        Provider p = provider(probed);
        Provider other = provider("SunJSSE".equals(probed) ? "TLSBridge" : "SunJSSE");
        boolean probeClient = role.equals("client");
        SSLContext clientCtx = Contexts.clientWithCert(probeClient ? p : other);
        SSLContext serverCtx = Contexts.server(probeClient ? other : p, "rsa");
        SSLEngine client = clientCtx.createSSLEngine("localhost", 443);
        client.setUseClientMode(true);
        client.setEnabledProtocols(new String[] {protocol});
        SSLEngine server = serverCtx.createSSLEngine();
        server.setUseClientMode(false);
        server.setNeedClientAuth(true);
        drive(probeClient ? client : server, probeClient ? server : client, direct);
        assertEquals(protocol, client.getSession().getProtocol());
    }

    @Test
    void tinyDestinationForAClientHello() throws Exception {
        for (String name : new String[] {"SunJSSE", "TLSBridge"}) {
            SSLEngine e = Contexts.client(provider(name)).createSSLEngine("localhost", 443);
            e.setUseClientMode(true);
            SSLEngineResult r = e.wrap(EMPTY, ByteBuffer.allocate(10));
            assertEquals(Status.BUFFER_OVERFLOW, r.getStatus(), name);
            assertEquals(HandshakeStatus.NEED_WRAP, r.getHandshakeStatus(), name);
            assertEquals(0, r.bytesConsumed() + r.bytesProduced(), name);
            assertEquals(HandshakeStatus.NEED_WRAP, e.getHandshakeStatus(), name);
        }
    }

    @ParameterizedTest(name = "{0}: first unwrap with {1}")
    @CsvSource({"SunJSSE,empty", "SunJSSE,partial", "SunJSSE,garbage", "TLSBridge,empty", "TLSBridge,partial",
        "TLSBridge,garbage"})
    void clientsFirstUnwrapStartsTheHandshake(String name, String input) throws Exception {
        byte[] src;
        switch (input) {
            case "partial": src = new byte[] {22, 3, 3, 0, 50, 2, 0}; break;
            case "garbage": src = "GET / HTTP/1.1\r\n\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII); break;
            default: src = new byte[0];
        }
        SSLContext ctx = Contexts.client(provider(name));
        SSLEngine e = ctx.createSSLEngine("localhost", 443);
        e.setUseClientMode(true);
        assertEquals(HandshakeStatus.NOT_HANDSHAKING, e.getHandshakeStatus());
        ByteBuffer in = ByteBuffer.wrap(src);
        SSLEngineResult r = e.unwrap(in, ByteBuffer.allocate(1 << 15));
        assertEquals(Status.OK, r.getStatus(), name);
        assertEquals(HandshakeStatus.NEED_WRAP, r.getHandshakeStatus(), name);
        assertEquals(0, r.bytesConsumed() + r.bytesProduced(), name);
        assertEquals(src.length, in.remaining(), "nothing consumed");
        assertEquals(HandshakeStatus.NEED_WRAP, e.getHandshakeStatus(), name);
        // and the handshake it began goes on: the ClientHello comes next
        ByteBuffer out = ByteBuffer.allocate(e.getSession().getPacketBufferSize());
        r = e.wrap(EMPTY, out);
        assertEquals(Status.OK, r.getStatus(), name);
        assertTrue(r.bytesProduced() > 0, name);
        assertEquals(22, out.get(0), "a handshake record");
        assertEquals(HandshakeStatus.NEED_UNWRAP, e.getHandshakeStatus(), name);
    }

    /**
     * A TLS 1.3 server reports FINISHED from the unwrap that reads the
     * client's Finished, with its NewSessionTickets still queued (NEED_WRAP
     * afterwards): Tomcat then serves the request at once instead of
     * wrapping the tickets alone and waiting for OP_WRITE. The tickets leave
     * ahead of the first response, and the client can resume with them.
     */
    @ParameterizedTest(name = "client {0}")
    @CsvSource({"TLSBridge", "SunJSSE"})
    void tls13ServerFinishesBeforeItsTickets(String clientName) throws Exception {
        SSLContext serverCtx = Contexts.server(Contexts.TLSBRIDGE, "ec");
        SSLContext clientCtx = Contexts.client(provider(clientName));
        assertTrue(!ticketConnection(clientCtx, serverCtx), "first connection: full handshake");
        assertTrue(ticketConnection(clientCtx, serverCtx), "second connection resumes with a ticket");
    }

    /** One connection as Tomcat drives its server side; true if the server resumed. */
    private static boolean ticketConnection(SSLContext clientCtx, SSLContext serverCtx) throws Exception {
        SSLEngine client = clientCtx.createSSLEngine("localhost", 443);
        client.setUseClientMode(true);
        client.setEnabledProtocols(new String[] {"TLSv1.3"});
        SSLEngine server = serverCtx.createSSLEngine();
        server.setUseClientMode(false);
        ByteBuffer c2s = ByteBuffer.allocate(1 << 17);
        ByteBuffer s2c = ByteBuffer.allocate(1 << 17);
        ByteBuffer app = ByteBuffer.allocate(1 << 16);
        client.beginHandshake();
        server.beginHandshake();
        // until the client has sent its Finished; the server stops short of reading it
        for (int i = 0; i < 50 && client.getHandshakeStatus() != HandshakeStatus.NOT_HANDSHAKING; i++) {
            step(client, s2c, c2s, app);
            if (server.getHandshakeStatus() != HandshakeStatus.NEED_UNWRAP || !finishedPending(client, c2s)) {
                step(server, c2s, s2c, app);
            }
        }
        assertEquals(HandshakeStatus.NOT_HANDSHAKING, client.getHandshakeStatus());
        SSLEngineResult r = client.wrap(ByteBuffer.wrap(new byte[] {'G', 'E', 'T'}), c2s);
        assertEquals(Status.OK, r.getStatus());
        c2s.flip();
        app.clear();
        r = server.unwrap(c2s, app);
        while (r.getHandshakeStatus() == HandshakeStatus.NEED_UNWRAP && r.getStatus() == Status.OK) {
            r = server.unwrap(c2s, app); // a middlebox-compatibility change_cipher_spec first
        }
        assertEquals(Status.OK, r.getStatus());
        assertEquals(HandshakeStatus.FINISHED, r.getHandshakeStatus(), "the unwrap of the client's Finished");
        assertEquals(0, r.bytesProduced());
        assertTrue(c2s.hasRemaining(), "the request stays for the next unwrap");
        assertEquals(HandshakeStatus.NEED_WRAP, server.getHandshakeStatus(), "the tickets are queued");
        r = server.unwrap(c2s, app);
        assertEquals(3, r.bytesProduced());
        // the response's wrap carries the tickets ahead of it
        s2c.clear();
        r = server.wrap(ByteBuffer.wrap(new byte[] {'O', 'K'}), s2c);
        assertEquals(Status.OK, r.getStatus());
        assertEquals(2, r.bytesConsumed());
        assertEquals(HandshakeStatus.NOT_HANDSHAKING, r.getHandshakeStatus());
        assertEquals(HandshakeStatus.NOT_HANDSHAKING, server.getHandshakeStatus());
        byte[] out = new byte[s2c.position()];
        s2c.flip().get(out);
        assertTrue(records(out, "tickets and response").size() >= 2, "tickets and response in one wrap");
        s2c.flip();
        app.clear();
        while (s2c.hasRemaining()) {
            r = client.unwrap(s2c, app);
            assertEquals(Status.OK, r.getStatus());
            runTasks(client);
        }
        assertEquals(2, app.position(), "the response after the tickets");
        return org.tlsbridge.TlsBridgeProvider.isResumed(server.getSession());
    }

    /**
     * A TLS 1.2 server engine made for a caller whose client speaks first
     * (the Tomcat adapter's, {@link TlsBridgeEngine#clientSpeaksFirst()})
     * says NEED_UNWRAP after the wrap of its last flight, so Tomcat flushes
     * it at once instead of asking the poller for OP_WRITE, and FINISHED
     * from the next unwrap: of no bytes (OK, nothing read), or of the
     * client's request when it is already there. Without the call the same
     * wrap says FINISHED, as SunJSSE's does.
     */
    @ParameterizedTest(name = "client speaks first {0}, request waiting {1}")
    @CsvSource({"true, false", "true, true", "false, false"})
    void tls12LastFlight(boolean clientFirst, boolean requestWaiting) throws Exception {
        SSLEngine client = Contexts.client(Contexts.TLSBRIDGE).createSSLEngine("localhost", 443);
        client.setUseClientMode(true);
        client.setEnabledProtocols(new String[] {"TLSv1.2"});
        SSLEngine server = Contexts.server(Contexts.TLSBRIDGE, "ec").createSSLEngine();
        server.setUseClientMode(false);
        if (clientFirst) {
            ((TlsBridgeEngine) server).clientSpeaksFirst();
        }
        ByteBuffer c2s = ByteBuffer.allocate(1 << 17);
        ByteBuffer s2c = ByteBuffer.allocate(1 << 17);
        ByteBuffer app = ByteBuffer.allocate(1 << 16);
        client.beginHandshake();
        server.beginHandshake();
        SSLEngineResult last = null;
        for (int i = 0; i < 50 && last == null; i++) {
            step(client, s2c, c2s, app);
            if (server.getHandshakeStatus() == HandshakeStatus.NEED_WRAP && c2s.position() == 0
                    && client.getHandshakeStatus() == HandshakeStatus.NEED_UNWRAP && i > 2) {
                last = server.wrap(EMPTY, s2c); // the ticket, ChangeCipherSpec and Finished
            } else {
                step(server, c2s, s2c, app);
            }
        }
        assertTrue(last != null && last.bytesProduced() > 0, "the server's last flight: " + last);
        if (!clientFirst) {
            assertEquals(HandshakeStatus.FINISHED, last.getHandshakeStatus());
            assertEquals(HandshakeStatus.NOT_HANDSHAKING, server.getHandshakeStatus());
            return;
        }
        assertEquals(HandshakeStatus.NEED_UNWRAP, last.getHandshakeStatus(), "flushed at once by Tomcat");
        assertEquals(HandshakeStatus.NEED_UNWRAP, server.getHandshakeStatus());
        unwrapAll(client, s2c, app);
        assertEquals(HandshakeStatus.NOT_HANDSHAKING, client.getHandshakeStatus(), "the client is done");
        if (requestWaiting) {
            assertEquals(Status.OK, client.wrap(ByteBuffer.wrap(new byte[] {'G', 'E', 'T'}), c2s).getStatus());
        }
        c2s.flip();
        app.clear();
        SSLEngineResult r = server.unwrap(c2s, app);
        assertEquals(Status.OK, r.getStatus());
        assertEquals(HandshakeStatus.FINISHED, r.getHandshakeStatus());
        assertEquals(requestWaiting ? 3 : 0, r.bytesProduced());
        assertEquals(0, c2s.remaining());
        assertEquals(HandshakeStatus.NOT_HANDSHAKING, server.getHandshakeStatus());
        assertEquals("TLSv1.2", server.getSession().getProtocol());
        r = server.unwrap(c2s, app);
        assertEquals(Status.BUFFER_UNDERFLOW, r.getStatus(), "FINISHED is reported once");
        assertEquals(HandshakeStatus.NOT_HANDSHAKING, r.getHandshakeStatus());
    }

    /** The client's last flight is in c2s and nothing is left for the client to do. */
    private static boolean finishedPending(SSLEngine client, ByteBuffer c2s) {
        return client.getHandshakeStatus() == HandshakeStatus.NOT_HANDSHAKING && c2s.position() > 0;
    }

    /** One turn of an engine: its tasks, a wrap, or unwraps of what is there. */
    private static void step(SSLEngine e, ByteBuffer in, ByteBuffer out, ByteBuffer app) throws SSLException {
        HandshakeStatus hs = e.getHandshakeStatus();
        if (hs == HandshakeStatus.NEED_TASK) {
            runTasks(e);
        } else if (hs == HandshakeStatus.NEED_WRAP) {
            e.wrap(EMPTY, out);
        } else if (hs == HandshakeStatus.NEED_UNWRAP) {
            unwrapAll(e, in, app);
        }
    }
}
