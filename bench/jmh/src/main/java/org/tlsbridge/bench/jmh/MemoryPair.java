package org.tlsbridge.bench.jmh;

import java.nio.ByteBuffer;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.SSLException;

/**
 * A client and a server engine joined by two in-memory buffers. The client
 * gets no peer host/port, so no provider can resume (HandshakeBench checks
 * it): every handshake is a full one.
 */
final class MemoryPair implements AutoCloseable {
    private final Engines engines;
    final SSLEngine client;
    final SSLEngine server;
    final ByteBuffer c2s;
    final ByteBuffer s2c;
    private final ByteBuffer clientApp;
    private final ByteBuffer serverApp;
    private final ByteBuffer empty;
    /** Bytes the server's wraps produced: its handshake flight, tickets included. */
    long serverBytes;

    /** suites: the list both ends enable, or null for the engines' defaults. */
    MemoryPair(Engines engines, boolean direct, String[] suites) {
        this.engines = engines;
        client = engines.client();
        server = engines.server();
        if (suites != null) {
            client.setEnabledCipherSuites(suites);
            server.setEnabledCipherSuites(suites);
        }
        int net = Math.max(client.getSession().getPacketBufferSize(), server.getSession().getPacketBufferSize());
        int app = Math.max(client.getSession().getApplicationBufferSize(),
                server.getSession().getApplicationBufferSize());
        c2s = alloc(direct, net * 4);
        s2c = alloc(direct, net * 4);
        clientApp = alloc(direct, app * 2);
        serverApp = alloc(direct, app * 2);
        empty = alloc(direct, 0);
    }

    static ByteBuffer alloc(boolean direct, int n) {
        return direct ? ByteBuffer.allocateDirect(n) : ByteBuffer.allocate(n);
    }

    /** Runs the handshake to completion; throws if it stalls. */
    void handshake() throws SSLException {
        client.beginHandshake();
        server.beginHandshake();
        for (int round = 0; round < 64; round++) {
            boolean progress = step(client, s2c, c2s, clientApp);
            progress |= step(server, c2s, s2c, serverApp);
            if (done(client) && done(server) && c2s.position() == 0 && s2c.position() == 0) {
                return;
            }
            if (!progress) {
                throw new SSLException("handshake stalled: client " + client.getHandshakeStatus() + ", server "
                        + server.getHandshakeStatus());
            }
        }
        throw new SSLException("handshake did not finish in 64 rounds");
    }

    private static boolean done(SSLEngine e) {
        HandshakeStatus s = e.getHandshakeStatus();
        return s == HandshakeStatus.NOT_HANDSHAKING || s == HandshakeStatus.FINISHED;
    }

    /** One engine's turn: wrap what it wants to send, unwrap what arrived. */
    private boolean step(SSLEngine e, ByteBuffer in, ByteBuffer out, ByteBuffer app) throws SSLException {
        boolean progress = false;
        for (int i = 0; i < 16; i++) {
            HandshakeStatus hs = e.getHandshakeStatus();
            SSLEngineResult r;
            if (hs == HandshakeStatus.NEED_TASK) {
                Runnable t;
                while ((t = e.getDelegatedTask()) != null) {
                    t.run();
                }
                progress = true;
                continue;
            } else if (hs == HandshakeStatus.NEED_WRAP) {
                r = e.wrap(empty, out);
                if (e == server) {
                    serverBytes += r.bytesProduced();
                }
            } else if (hs == HandshakeStatus.NEED_UNWRAP || hs == HandshakeStatus.NEED_UNWRAP_AGAIN) {
                in.flip();
                r = e.unwrap(in, app);
                in.compact();
                app.clear();
            } else {
                // not handshaking: still drain what the peer sent (tickets etc.)
                if (in.position() == 0) {
                    return progress;
                }
                in.flip();
                r = e.unwrap(in, app);
                in.compact();
                app.clear();
            }
            if (r.bytesConsumed() == 0 && r.bytesProduced() == 0
                    && r.getHandshakeStatus() != HandshakeStatus.NEED_TASK
                    && r.getHandshakeStatus() != HandshakeStatus.FINISHED) {
                return progress;
            }
            progress = true;
        }
        return progress;
    }

    /** Client wraps {@code src} (from position to limit); server unwraps it. */
    int transfer(ByteBuffer src, ByteBuffer dst) throws SSLException {
        c2s.clear();
        while (src.hasRemaining()) {
            SSLEngineResult r = client.wrap(src, c2s);
            if (r.getStatus() != SSLEngineResult.Status.OK) {
                throw new SSLException("wrap: " + r);
            }
        }
        c2s.flip();
        int n = 0;
        while (c2s.hasRemaining()) {
            dst.clear();
            SSLEngineResult r = server.unwrap(c2s, dst);
            if (r.getStatus() != SSLEngineResult.Status.OK) {
                throw new SSLException("unwrap: " + r);
            }
            n += r.bytesProduced();
        }
        return n;
    }

    /** Both engines closed and given back (Netty's are reference-counted). */
    @Override
    public void close() {
        client.closeOutbound();
        server.closeOutbound();
        engines.release(client);
        engines.release(server);
    }
}
