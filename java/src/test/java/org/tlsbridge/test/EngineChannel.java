package org.tlsbridge.test;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.SSLEngineResult.Status;

/** A blocking TLS connection: an SSLEngine driven over a SocketChannel, as a real server does. */
public final class EngineChannel implements AutoCloseable {
    public final SSLEngine engine;
    private final SocketChannel ch;
    private final ByteBuffer netIn;
    private final ByteBuffer netOut;
    private final ByteBuffer appIn;
    private final ByteBuffer empty = ByteBuffer.allocate(0);
    private boolean eof;

    public EngineChannel(SSLEngine engine, SocketChannel ch, boolean direct) {
        this.engine = engine;
        this.ch = ch;
        int net = engine.getSession().getPacketBufferSize();
        int app = engine.getSession().getApplicationBufferSize();
        netIn = direct ? ByteBuffer.allocateDirect(net) : ByteBuffer.allocate(net);
        netOut = direct ? ByteBuffer.allocateDirect(net) : ByteBuffer.allocate(net);
        appIn = direct ? ByteBuffer.allocateDirect(app) : ByteBuffer.allocate(app);
        appIn.flip();
    }

    private void flush() throws IOException {
        netOut.flip();
        while (netOut.hasRemaining()) {
            ch.write(netOut);
        }
        netOut.clear();
    }

    private boolean fill() throws IOException {
        int n = ch.read(netIn);
        if (n < 0) {
            eof = true;
            return false;
        }
        return true;
    }

    public void handshake() throws IOException {
        engine.beginHandshake();
        HandshakeStatus hs = engine.getHandshakeStatus();
        while (hs != HandshakeStatus.NOT_HANDSHAKING && hs != HandshakeStatus.FINISHED) {
            switch (hs) {
                case NEED_WRAP: {
                    SSLEngineResult r = engine.wrap(empty, netOut);
                    flush();
                    hs = r.getHandshakeStatus();
                    if (r.getStatus() == Status.CLOSED) {
                        throw new EOFException("closed during handshake");
                    }
                    break;
                }
                case NEED_UNWRAP: {
                    netIn.flip();
                    SSLEngineResult r = engine.unwrap(netIn, appIn.compact());
                    appIn.flip();
                    netIn.compact();
                    hs = r.getHandshakeStatus();
                    if (r.getStatus() == Status.BUFFER_UNDERFLOW && !fill()) {
                        throw new EOFException("EOF during handshake");
                    }
                    if (r.getStatus() == Status.CLOSED) {
                        throw new EOFException("closed during handshake");
                    }
                    break;
                }
                case NEED_TASK: {
                    Runnable t;
                    while ((t = engine.getDelegatedTask()) != null) {
                        t.run();
                    }
                    hs = engine.getHandshakeStatus();
                    break;
                }
                default:
                    throw new IllegalStateException(hs.toString());
            }
        }
    }

    public void write(byte[] data) throws IOException {
        ByteBuffer src = ByteBuffer.wrap(data);
        do {
            SSLEngineResult r = engine.wrap(src, netOut);
            if (r.getStatus() != Status.OK) {
                throw new IOException("wrap: " + r);
            }
            flush();
        } while (src.hasRemaining());
    }

    /** Reads up to n plaintext bytes; fewer only at EOF/close_notify. */
    public byte[] read(int n) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        while (out.size() < n) {
            if (appIn.hasRemaining()) {
                int k = Math.min(n - out.size(), appIn.remaining());
                byte[] b = new byte[k];
                appIn.get(b);
                out.write(b);
                continue;
            }
            netIn.flip();
            SSLEngineResult r = engine.unwrap(netIn, appIn.compact());
            appIn.flip();
            netIn.compact();
            if (System.getenv("TB_DEBUG") != null) System.err.println("read unwrap: " + r);
            if (r.getStatus() == Status.CLOSED) {
                break;
            }
            if (r.getHandshakeStatus() == HandshakeStatus.NEED_WRAP) {
                engine.wrap(empty, netOut);
                flush();
            }
            if (r.getStatus() == Status.BUFFER_UNDERFLOW || (r.bytesConsumed() == 0 && r.bytesProduced() == 0)) {
                if (!fill()) {
                    break;
                }
            }
        }
        return out.toByteArray();
    }

    /** Sends close_notify and keeps the channel open to read what the peer still sends. */
    public void closeOutbound() throws IOException {
        engine.closeOutbound();
        while (!engine.isOutboundDone()) {
            engine.wrap(empty, netOut);
            flush();
        }
    }

    /** Reads until the peer closes. */
    public byte[] readAll() throws IOException {
        return read(Integer.MAX_VALUE);
    }

    public boolean eof() {
        return eof;
    }

    @Override
    public void close() throws IOException {
        try {
            engine.closeOutbound();
            while (!engine.isOutboundDone()) {
                engine.wrap(empty, netOut);
                flush();
            }
        } catch (IOException e) {
            // the peer may already be gone
        } finally {
            ch.close();
        }
    }
}
