package org.tlsbridge.socket;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;

/**
 * A SunJSSE SSLEngine driven over a plain socket, as the peer of a native socket: the test says
 * which records go out together in one write(2), which an SSLSocket peer cannot.
 */
final class EnginePeer {
    private final SSLEngine engine;
    private final InputStream in;
    private final OutputStream out;
    private final ByteBuffer inNet;
    private final ByteBuffer app;
    private ByteBuffer net;

    EnginePeer(SSLEngine engine, Socket raw) throws IOException {
        this.engine = engine;
        this.in = raw.getInputStream();
        this.out = raw.getOutputStream();
        int packet = engine.getSession().getPacketBufferSize();
        this.net = ByteBuffer.allocate(packet * 4);
        this.inNet = ByteBuffer.allocate(packet * 2).flip();
        this.app = ByteBuffer.allocate(engine.getSession().getApplicationBufferSize()).flip();
    }

    /** Runs the handshake to its end (beginHandshake first). */
    void handshake() throws IOException {
        engine.beginHandshake();
        for (;;) {
            switch (engine.getHandshakeStatus()) {
                case NEED_WRAP:
                    wrap(ByteBuffer.allocate(0));
                    flush();
                    break;
                case NEED_UNWRAP:
                case NEED_UNWRAP_AGAIN:
                    unwrapOnce();
                    break;
                case NEED_TASK:
                    runTasks();
                    break;
                default:
                    return;
            }
        }
    }

    /** Adds the records that wrapping src makes to what the next flush writes. */
    void wrap(ByteBuffer src) throws IOException {
        do {
            if (net.remaining() < engine.getSession().getPacketBufferSize()) {
                net = ByteBuffer.allocate(net.capacity() * 2).put(net.flip());
            }
            SSLEngineResult r = engine.wrap(src, net);
            if (r.getStatus() != SSLEngineResult.Status.OK) {
                throw new IOException("wrap: " + r);
            }
            runTasks();
        } while (src.hasRemaining() || engine.getHandshakeStatus() == SSLEngineResult.HandshakeStatus.NEED_WRAP);
    }

    /** Everything wrapped since the last flush, in one write(2). */
    void flush() throws IOException {
        out.write(net.array(), 0, net.position());
        out.flush();
        net.clear();
    }

    /** Reads n bytes of application data, answering what the server sends meanwhile. */
    void readFully(byte[] b, int off, int n) throws IOException {
        while (n > 0) {
            if (!app.hasRemaining()) {
                unwrapOnce();
                if (engine.getHandshakeStatus() == SSLEngineResult.HandshakeStatus.NEED_WRAP) {
                    wrap(ByteBuffer.allocate(0)); // the answer to a KeyUpdate that asked for one
                    flush();
                }
                continue;
            }
            int k = Math.min(n, app.remaining());
            app.get(b, off, k);
            off += k;
            n -= k;
        }
    }

    private void unwrapOnce() throws IOException {
        app.compact();
        SSLEngineResult r = engine.unwrap(inNet, app);
        app.flip();
        if (r.getStatus() == SSLEngineResult.Status.BUFFER_UNDERFLOW) {
            inNet.compact();
            int n = in.read(inNet.array(), inNet.position(), inNet.remaining());
            if (n < 0) {
                throw new IOException("the server closed the connection");
            }
            inNet.position(inNet.position() + n).flip();
        } else if (r.getStatus() != SSLEngineResult.Status.OK) {
            throw new IOException("unwrap: " + r);
        }
        runTasks();
    }

    private void runTasks() {
        Runnable t;
        while ((t = engine.getDelegatedTask()) != null) {
            t.run();
        }
    }
}
