package org.tlsbridge.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.ByteBuffer;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.SSLEngineResult.Status;
import javax.net.ssl.SSLException;

/**
 * Two engines joined in memory, driven the way a careful application does:
 * wrap when asked, unwrap what arrived, run delegated tasks, grow nothing.
 */
public final class EnginePair {
    public final SSLEngine client;
    public final SSLEngine server;
    private final boolean direct;
    private ByteBuffer c2s;
    private ByteBuffer s2c;
    private ByteBuffer clientApp;
    private ByteBuffer serverApp;
    private final ByteBuffer empty;

    public EnginePair(SSLContext clientCtx, SSLContext serverCtx, boolean direct) {
        this(clientCtx, serverCtx, direct, "localhost", 443);
    }

    public EnginePair(SSLContext clientCtx, SSLContext serverCtx, boolean direct, String host, int port) {
        this.client = clientCtx.createSSLEngine(host, port);
        this.client.setUseClientMode(true);
        this.server = serverCtx.createSSLEngine();
        this.server.setUseClientMode(false);
        this.direct = direct;
        this.empty = alloc(0);
    }

    /** Two engines made elsewhere, client mode already set on each. */
    public EnginePair(SSLEngine client, SSLEngine server, boolean direct) {
        this.client = client;
        this.server = server;
        this.direct = direct;
        this.empty = alloc(0);
    }

    public ByteBuffer alloc(int n) {
        return direct ? ByteBuffer.allocateDirect(n) : ByteBuffer.allocate(n);
    }

    private void buffers() {
        if (c2s == null) {
            int net = Math.max(client.getSession().getPacketBufferSize(), server.getSession().getPacketBufferSize());
            int app = Math.max(client.getSession().getApplicationBufferSize(),
                    server.getSession().getApplicationBufferSize());
            c2s = alloc(net * 4);
            s2c = alloc(net * 4);
            clientApp = alloc(app);
            serverApp = alloc(app);
        }
    }

    static void runTasks(SSLEngine e) {
        Runnable t;
        while ((t = e.getDelegatedTask()) != null) {
            t.run();
        }
    }

    /** One step for one side: returns true if it made progress. */
    private boolean step(SSLEngine e, ByteBuffer out, ByteBuffer in, ByteBuffer app) throws SSLException {
        boolean progress = false;
        HandshakeStatus hs = e.getHandshakeStatus();
        if (hs == HandshakeStatus.NEED_TASK) {
            runTasks(e);
            return true;
        }
        if (hs == HandshakeStatus.NEED_WRAP) {
            SSLEngineResult r = e.wrap(empty, out);
            progress |= r.bytesProduced() > 0;
            if (r.getHandshakeStatus() == HandshakeStatus.NEED_TASK) {
                runTasks(e);
                progress = true;
            }
        }
        in.flip();
        try {
            if (in.hasRemaining() && e.getHandshakeStatus() != HandshakeStatus.NEED_TASK) {
                SSLEngineResult r = e.unwrap(in, app);
                progress |= r.bytesConsumed() > 0;
                assertEquals(0, r.bytesProduced(), "no application data during the handshake");
                if (r.getHandshakeStatus() == HandshakeStatus.NEED_TASK) {
                    runTasks(e);
                    progress = true;
                }
            }
        } finally {
            in.compact();
        }
        return progress;
    }

    public void handshake() throws SSLException {
        buffers();
        client.beginHandshake();
        server.beginHandshake();
        for (int i = 0; i < 200; i++) {
            boolean a = step(client, c2s, s2c, clientApp);
            boolean b = step(server, s2c, c2s, serverApp);
            if (!a && !b) {
                break;
            }
        }
        // Tomcat's channels unwrap what they have after a handshake wrap that
        // says NEED_UNWRAP, even nothing: the Tomcat adapter's TLS 1.2 server
        // reports FINISHED from that unwrap after its last flight
        if (server.getHandshakeStatus() == HandshakeStatus.NEED_UNWRAP && c2s.position() == 0) {
            c2s.flip();
            try {
                server.unwrap(c2s, serverApp);
            } finally {
                c2s.compact();
            }
        }
        assertEquals(HandshakeStatus.NOT_HANDSHAKING, client.getHandshakeStatus(), "client handshake");
        assertEquals(HandshakeStatus.NOT_HANDSHAKING, server.getHandshakeStatus(), "server handshake");
        assertTrue(client.getSession().isValid() || client.getSession().getProtocol().startsWith("TLS"));
    }

    /** Sends bytes from one engine to the other and returns what arrived. */
    public byte[] send(SSLEngine from, byte[] data) throws SSLException {
        buffers();
        SSLEngine to = from == client ? server : client;
        ByteBuffer net = alloc(from.getSession().getPacketBufferSize());
        ByteBuffer src = alloc(data.length);
        src.put(data).flip();
        ByteBuffer app = alloc(to.getSession().getApplicationBufferSize());
        ByteBuffer got = ByteBuffer.allocate(data.length);
        int guard = 0;
        while (src.hasRemaining() || data.length == 0 && guard == 0) {
            net.clear();
            SSLEngineResult w = from.wrap(src, net);
            assertEquals(Status.OK, w.getStatus(), "wrap");
            net.flip();
            while (net.hasRemaining()) {
                app.clear();
                SSLEngineResult u = to.unwrap(net, app);
                assertEquals(Status.OK, u.getStatus(), "unwrap");
                app.flip();
                got.put(app);
                if (u.bytesConsumed() == 0) {
                    fail("unwrap made no progress: " + u);
                }
            }
            if (++guard > 1_000_000) {
                fail("no progress");
            }
            if (data.length == 0) {
                break;
            }
        }
        return got.array();
    }

    /**
     * The whole of src as one record from the client into the server's app buffer, the buffers
     * reused as given: allocation-free while it succeeds (the assertions run only on a failure), so
     * steady-state tests can loop over it.
     */
    public void record(ByteBuffer src, ByteBuffer net, ByteBuffer app) throws SSLException {
        src.clear();
        net.clear();
        SSLEngineResult w = client.wrap(src, net);
        net.flip();
        app.clear();
        SSLEngineResult u = server.unwrap(net, app);
        if (w.getStatus() != Status.OK || u.getStatus() != Status.OK || u.bytesProduced() != src.capacity()
                || net.hasRemaining()) {
            assertEquals(Status.OK, w.getStatus(), w.toString());
            assertEquals(Status.OK, u.getStatus(), u.toString());
            assertEquals(src.capacity(), u.bytesProduced(), u.toString());
            assertEquals(0, net.remaining(), "the record was not consumed whole: " + u);
        }
    }

    /** close_notify from one side, answered by the other. */
    public void close(SSLEngine first) throws SSLException {
        SSLEngine second = first == client ? server : client;
        ByteBuffer net = alloc(first.getSession().getPacketBufferSize());
        ByteBuffer app = alloc(second.getSession().getApplicationBufferSize());
        first.closeOutbound();
        SSLEngineResult r = first.wrap(empty, net);
        assertEquals(Status.CLOSED, r.getStatus());
        assertTrue(r.bytesProduced() > 0, "close_notify produced");
        assertTrue(first.isOutboundDone());
        net.flip();
        r = second.unwrap(net, app);
        assertEquals(Status.CLOSED, r.getStatus());
        assertTrue(second.isInboundDone());
        net.clear();
        second.closeOutbound();
        r = second.wrap(empty, net);
        assertEquals(Status.CLOSED, r.getStatus());
        assertTrue(second.isOutboundDone());
        net.flip();
        if (net.hasRemaining()) {
            r = first.unwrap(net, app);
            assertEquals(Status.CLOSED, r.getStatus());
        }
        assertTrue(first.isInboundDone() || first.getSession().getProtocol().equals("TLSv1.3"));
    }
}
