package org.tlsbridge.test;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.SSLException;

/**
 * ClientHellos no stock client sends: a real one taken from a client engine,
 * one extension replaced, lengths fixed, fed to a server engine in records.
 * The server cannot finish such a handshake (the client's transcript differs),
 * so what it can show is how far it got: its whole first flight, or an alert.
 */
public final class ClientHellos {
    public static final int SERVER_NAME = 0;
    public static final int SIGNATURE_ALGORITHMS = 13;
    public static final int ALPN = 16;
    public static final int SIGNATURE_ALGORITHMS_CERT = 50;
    private static final int PRE_SHARED_KEY = 41;

    private ClientHellos() {
    }

    /** The ClientHello handshake message (header included) of a client engine's first flight. */
    public static byte[] first(SSLEngine client) throws SSLException {
        ByteBuffer out = ByteBuffer.allocate(client.getSession().getPacketBufferSize() * 2);
        client.beginHandshake();
        client.wrap(ByteBuffer.allocate(0), out);
        out.flip();
        ByteArrayOutputStream msg = new ByteArrayOutputStream();
        while (out.remaining() >= 5) {
            out.get();
            out.getShort();
            byte[] body = new byte[out.getShort() & 0xffff];
            out.get(body);
            msg.write(body, 0, body.length);
        }
        return msg.toByteArray();
    }

    private static int u16(byte[] b, int p) {
        return (b[p] & 0xff) << 8 | (b[p + 1] & 0xff);
    }

    private static void put16(ByteArrayOutputStream o, int v) {
        o.write(v >> 8);
        o.write(v);
    }

    private static void ext(ByteArrayOutputStream o, int type, byte[] data) {
        put16(o, type);
        put16(o, data.length);
        o.write(data, 0, data.length);
    }

    /** Where a ClientHello message's extensions block (its length first) begins. */
    private static int extensionsAt(byte[] hello) {
        int p = 4 + 2 + 32;
        p += 1 + (hello[p] & 0xff); // session id
        p += 2 + u16(hello, p); // cipher suites
        return p + 1 + (hello[p] & 0xff); // compression methods
    }

    /** The body of extension type in a ClientHello message, or null. */
    public static byte[] extension(byte[] hello, int type) {
        int p = extensionsAt(hello);
        for (int q = p + 2, end = q + u16(hello, p); q < end; q += 4 + u16(hello, q + 2)) {
            if (u16(hello, q) == type) {
                return java.util.Arrays.copyOfRange(hello, q + 4, q + 4 + u16(hello, q + 2));
            }
        }
        return null;
    }

    /** hello with extension type replaced by data (added if absent; pre_shared_key stays last). */
    public static byte[] withExtension(byte[] hello, int type, byte[] data) {
        int p = extensionsAt(hello);
        int start = p + 2;
        int end = start + u16(hello, p);
        ByteArrayOutputStream exts = new ByteArrayOutputStream();
        boolean done = false;
        for (int q = start; q < end;) {
            int t = u16(hello, q);
            int n = u16(hello, q + 2);
            if (t == type || (t == PRE_SHARED_KEY && !done)) {
                ext(exts, type, data);
                done = true;
            }
            if (t != type) {
                exts.write(hello, q, 4 + n);
            }
            q += 4 + n;
        }
        if (!done) {
            ext(exts, type, data);
        }
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.write(hello, 4, p - 4);
        put16(body, exts.size());
        body.write(exts.toByteArray(), 0, exts.size());
        ByteArrayOutputStream msg = new ByteArrayOutputStream();
        msg.write(1);
        msg.write(body.size() >> 16);
        put16(msg, body.size());
        msg.write(body.toByteArray(), 0, body.size());
        return msg.toByteArray();
    }

    /** server_name holding one host_name of exactly these bytes. */
    public static byte[] serverName(byte[] name) {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        put16(o, name.length + 3);
        o.write(0);
        put16(o, name.length);
        o.write(name, 0, name.length);
        return o.toByteArray();
    }

    /** A signature_algorithms(_cert) list of these code points. */
    public static byte[] schemes(int[] codes) {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        put16(o, codes.length * 2);
        for (int c : codes) {
            put16(o, c);
        }
        return o.toByteArray();
    }

    /** What a server engine did with a ClientHello: its output records, or the exception it threw. */
    public static final class Outcome {
        public final byte[] output;
        public final Throwable failure;
        public final HandshakeStatus status;

        Outcome(byte[] output, Throwable failure, HandshakeStatus status) {
            this.output = output;
            this.failure = failure;
            this.status = status;
        }

        /** The first record's content type and first body byte (handshake type or alert level). */
        public int firstRecordType() {
            return output.length < 5 ? -1 : output[0] & 0xff;
        }

        /** Handshake message type of the first record (2: ServerHello), or -1. */
        public int firstHandshakeType() {
            return firstRecordType() == 22 && output.length > 5 ? output[5] & 0xff : -1;
        }

        /** The description of the first alert record in the output, or -1. */
        public int alert() {
            for (int p = 0; p + 5 <= output.length;) {
                int len = (output[p + 3] & 0xff) << 8 | (output[p + 4] & 0xff);
                if ((output[p] & 0xff) == 21 && len == 2 && p + 7 <= output.length) {
                    return output[p + 6] & 0xff;
                }
                p += 5 + len;
            }
            return -1;
        }

        @Override
        public String toString() {
            return "status " + status + ", " + output.length + " bytes out, first record " + firstRecordType()
                    + ", alert " + alert() + ", failure " + failure;
        }
    }

    /** Feeds hello to a fresh server engine in records of at most 2^14 bytes and collects its answer. */
    public static Outcome feed(SSLEngine server, byte[] hello) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Throwable failure = null;
        ByteBuffer net = ByteBuffer.allocate(hello.length + 5 * (hello.length / 16384 + 1));
        for (int p = 0; p < hello.length; p += 16384) {
            int n = Math.min(16384, hello.length - p);
            net.put((byte) 22).put((byte) 3).put((byte) 1).putShort((short) n).put(hello, p, n);
        }
        net.flip();
        ByteBuffer app = ByteBuffer.allocate(server.getSession().getApplicationBufferSize());
        ByteBuffer dst = ByteBuffer.allocate(server.getSession().getPacketBufferSize());
        try {
            server.beginHandshake();
            for (int guard = 0; guard < 1000; guard++) {
                HandshakeStatus hs = server.getHandshakeStatus();
                if (hs == HandshakeStatus.NEED_TASK) {
                    Runnable t;
                    while ((t = server.getDelegatedTask()) != null) {
                        t.run();
                    }
                } else if (hs == HandshakeStatus.NEED_WRAP) {
                    drain(server, dst, out);
                } else if (net.hasRemaining()) {
                    SSLEngineResult r = server.unwrap(net, app);
                    if (r.bytesConsumed() == 0 && r.getHandshakeStatus() != HandshakeStatus.NEED_TASK
                            && r.getHandshakeStatus() != HandshakeStatus.NEED_WRAP) {
                        break;
                    }
                } else {
                    break;
                }
            }
        } catch (Throwable t) {
            failure = t;
            try {
                drain(server, dst, out); // the alert
            } catch (Throwable ignored) {
                // the failure above is what the test judges
            }
        }
        return new Outcome(out.toByteArray(), failure, server.getHandshakeStatus());
    }

    private static void drain(SSLEngine server, ByteBuffer dst, ByteArrayOutputStream out) throws SSLException {
        for (int i = 0; i < 50; i++) {
            dst.clear();
            SSLEngineResult r = server.wrap(ByteBuffer.allocate(0), dst);
            out.write(dst.array(), 0, dst.position());
            if (r.bytesProduced() == 0 || r.getHandshakeStatus() != HandshakeStatus.NEED_WRAP) {
                return;
            }
        }
    }
}
