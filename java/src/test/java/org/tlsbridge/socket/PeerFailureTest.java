package org.tlsbridge.socket;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.tlsbridge.test.Contexts;

/**
 * The peer goes away at the worst moments: after every byte of the
 * handshake (either direction), in the middle of a record, and with a TCP
 * reset in the middle of a transfer. tlsbridge's native sockets sit on
 * both ends of a proxy that cuts the connection; each end must fail with
 * an IOException that says something (never a timeout: that would be a
 * hang), and the native side must stay sound (the sanitizer pass runs this
 * too).
 */
class PeerFailureTest {
    private static final InetAddress LO = InetAddress.getLoopbackAddress();
    // RSA: the handshake has the same size every time (ECDSA signatures vary)
    private static final SSLContext SERVER = statelessTicketsOff();

    /**
     * The cut points need flights of a fixed size. A stateless ticket's size
     * moves by a cipher block with the random ticket_age_add OpenSSL encodes
     * in the sealed session; a stateful ticket is a fixed-size id.
     */
    private static SSLContext statelessTicketsOff() {
        return Contexts.serverWith("tlsbridge.sessionTickets", "false", "rsa");
    }
    private static final ExecutorService POOL = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "peer-failure");
        t.setDaemon(true);
        return t;
    });
    private static final long NO_LIMIT = Long.MAX_VALUE;
    private static final int TIMEOUT_MS = 10_000;

    @AfterAll
    static void stop() {
        POOL.shutdownNow();
    }

    /** One proxied connection; forwards until a direction reaches its limit, then cuts both. */
    private static final class Cut implements AutoCloseable {
        final ServerSocket listen;
        final AtomicLong c2s = new AtomicLong();
        final AtomicLong s2c = new AtomicLong();
        private volatile Socket a;
        private volatile Socket b;
        private final boolean reset;

        Cut(int target, long c2sLimit, long s2cLimit, boolean reset) throws IOException {
            this.reset = reset;
            listen = new ServerSocket(0, 1, LO);
            POOL.submit(() -> {
                try {
                    a = listen.accept();
                    b = new Socket(LO, target);
                    a.setTcpNoDelay(true);
                    b.setTcpNoDelay(true);
                    POOL.submit(() -> pump(b.getInputStream(), a.getOutputStream(), s2cLimit, s2c));
                    pump(a.getInputStream(), b.getOutputStream(), c2sLimit, c2s);
                } catch (IOException e) {
                    cut();
                }
                return null;
            });
        }

        private Object pump(InputStream in, OutputStream out, long limit, AtomicLong count) {
            byte[] buf = new byte[16384];
            try {
                while (count.get() < limit) {
                    int n = in.read(buf, 0, (int) Math.min(buf.length, limit - count.get()));
                    if (n < 0) {
                        break;
                    }
                    out.write(buf, 0, n);
                    count.addAndGet(n);
                }
            } catch (IOException e) {
                // the other pump cut first
            }
            cut();
            return null;
        }

        synchronized void cut() {
            for (Socket s : new Socket[] {a, b}) {
                if (s == null) {
                    continue;
                }
                try {
                    if (reset) {
                        s.setSoLinger(true, 0); // close sends RST
                    }
                    s.close();
                } catch (IOException e) {
                    // already gone
                }
            }
        }

        int port() {
            return listen.getLocalPort();
        }

        @Override
        public void close() throws IOException {
            cut();
            listen.close();
        }
    }

    /** What one end did: null when it finished, else the exception that ended it. */
    private interface End {
        void run(SSLSocket s) throws IOException;
    }

    private static Future<Throwable> server(SSLServerSocket ss, End end) {
        return POOL.submit(() -> {
            try (SSLSocket s = (SSLSocket) ss.accept()) {
                s.setSoTimeout(TIMEOUT_MS);
                s.startHandshake();
                end.run(s);
                return null;
            } catch (Throwable t) {
                return t;
            }
        });
    }

    private static Throwable client(int port, String protocol, End end) {
        // a context of its own: no session to resume, so every handshake has the same size
        SSLContext fresh = Contexts.client(Contexts.TLSBRIDGE);
        try (SSLSocket s = (SSLSocket) fresh.getSocketFactory().createSocket(LO, port)) {
            s.setSoTimeout(TIMEOUT_MS);
            s.setEnabledProtocols(new String[] {protocol});
            s.startHandshake();
            end.run(s);
            return null;
        } catch (Throwable t) {
            return t;
        }
    }

    /** An end that failed as a vanished peer should make it fail. */
    private static void assertCleanFailure(String what, Throwable t) {
        assertNotNull(t, what + ": finished normally although the peer was cut off");
        if (t instanceof SocketTimeoutException) {
            fail(what + ": timed out, i.e. hung, instead of seeing the peer go", t);
        }
        if (!(t instanceof IOException)) {
            fail(what + ": " + t + " is not an IOException", t);
        }
        assertNotNull(t.getMessage(), what + ": " + t.getClass().getName() + " without a message");
        assertFalse(t.getMessage().isBlank(), what + ": blank message");
    }

    private static final End ECHO_SERVER = s -> {
        int b = s.getInputStream().read();
        if (b < 0) {
            throw new java.io.EOFException("client went away before its byte");
        }
        s.getOutputStream().write(b);
        s.getOutputStream().flush();
    };

    private static final End ECHO_CLIENT = s -> {
        s.getOutputStream().write(42);
        s.getOutputStream().flush();
        if (s.getInputStream().read() != 42) {
            throw new java.io.EOFException("server went away before its answer");
        }
    };

    /**
     * Bytes each way of a whole handshake (session tickets included) plus
     * one byte echoed, counted when the client has the echo: everything up
     * to there is needed by the exchange.
     */
    private static long[] measure(SSLServerSocket ss, String protocol) throws Exception {
        long[] seen = new long[2];
        try (Cut cut = new Cut(ss.getLocalPort(), NO_LIMIT, NO_LIMIT, false)) {
            // the server's close_notify waits for the client's: it must not be counted
            Future<Throwable> srv = server(ss, sock -> {
                ECHO_SERVER.run(sock);
                sock.getInputStream().read();
            });
            Throwable c = client(cut.port(), protocol, sock -> {
                ECHO_CLIENT.run(sock);
                seen[0] = cut.c2s.get();
                seen[1] = cut.s2c.get();
            });
            Throwable s = srv.get(TIMEOUT_MS * 2L, TimeUnit.MILLISECONDS);
            if (c != null || s != null) {
                throw new AssertionError("uncut run failed: client " + c + ", server " + s);
            }
            return seen;
        }
    }

    /**
     * Every byte in the first and last 320 of a direction (record headers,
     * hellos, Finished, tickets), every 11th in between (certificate and
     * signature bodies, where one byte is cut like the next):
     * -Dtlsbridge.test.everyByte=true takes them all.
     */
    private static long next(long k, long total) {
        if (Boolean.getBoolean("tlsbridge.test.everyByte") || k < 320 || k >= total - 320) {
            return k + 1;
        }
        return Math.min(k + 11, total - 320);
    }

    @ParameterizedTest
    @ValueSource(strings = {"TLSv1.3", "TLSv1.2"})
    void peerVanishesAfterEveryHandshakeByte(String protocol) throws Exception {
        try (SSLServerSocket ss = (SSLServerSocket) SERVER.getServerSocketFactory().createServerSocket(0, 50, LO)) {
            long[] total = measure(ss, protocol);
            assertTrue(total[0] > 100 && total[1] > 300, "handshake sizes " + total[0] + "/" + total[1]);
            int runs = 0;
            // c2s cut: the server loses its client; s2c cut: the client loses its server.
            // Up to the last byte the echo needs: no end can complete.
            for (int dir = 0; dir < 2; dir++) {
                for (long k = 0; k < total[dir]; k = next(k, total[dir])) {
                    long c2s = dir == 0 ? k : NO_LIMIT;
                    long s2c = dir == 1 ? k : NO_LIMIT;
                    try (Cut cut = new Cut(ss.getLocalPort(), c2s, s2c, false)) {
                        Future<Throwable> srv = server(ss, ECHO_SERVER);
                        Throwable c = client(cut.port(), protocol, ECHO_CLIENT);
                        Throwable s = srv.get(TIMEOUT_MS * 2L, TimeUnit.MILLISECONDS);
                        String at = protocol + (dir == 0 ? " client->server" : " server->client") + " cut after "
                                + k + " of " + total[dir] + " bytes";
                        // The end whose inbound stream was cut must fail. The
                        // other may have finished: its last write went into the
                        // proxy's socket before the cut and TCP cannot tell it.
                        assertCleanFailure(at + (dir == 0 ? ", server" : ", client"), dir == 0 ? s : c);
                        Throwable other = dir == 0 ? c : s;
                        if (other != null) {
                            assertCleanFailure(at + (dir == 0 ? ", client" : ", server"), other);
                        }
                        runs++;
                    }
                }
            }
            assertTrue(runs > 600, runs + " cut points");
        }
    }

    /**
     * The server's 1000-byte record is cut at several points inside it. No
     * byte of it may come out, and the client must not hang. A clean EOF is
     * accepted as SunJSSE gives one (it treats a TCP close without
     * close_notify as a close unless com.sun.net.ssl.requireCloseNotify).
     */
    @ParameterizedTest
    @ValueSource(strings = {"TLSv1.3", "TLSv1.2"})
    void halfWrittenRecordThenClose(String protocol) throws Exception {
        byte[] msg = new byte[1000];
        End serverSends = s -> {
            ECHO_SERVER.run(s);
            s.getOutputStream().write(msg);
            s.getOutputStream().flush();
            s.getInputStream().read(); // until the cut
        };
        End clientReads = s -> {
            ECHO_CLIENT.run(s);
            byte[] got = s.getInputStream().readNBytes(msg.length);
            if (got.length != 0) {
                throw new AssertionError(got.length + " bytes of a record that never arrived whole");
            }
        };
        try (SSLServerSocket ss = (SSLServerSocket) SERVER.getServerSocketFactory().createServerSocket(0, 50, LO)) {
            long start = measure(ss, protocol)[1]; // the record follows the echo
            for (long j : new long[] {1, 4, 5, 6, 20, 500, 1000}) {
                try (Cut cut = new Cut(ss.getLocalPort(), NO_LIMIT, start + j, false)) {
                    Future<Throwable> srv = server(ss, serverSends);
                    Throwable c = client(cut.port(), protocol, clientReads);
                    if (c instanceof AssertionError) {
                        throw (AssertionError) c;
                    }
                    if (c != null) {
                        assertCleanFailure(protocol + " record cut " + j + " bytes in, client", c);
                    }
                    Throwable s = srv.get(TIMEOUT_MS * 2L, TimeUnit.MILLISECONDS);
                    if (s != null) {
                        assertCleanFailure(protocol + " record cut " + j + " bytes in, server", s);
                    }
                }
            }
        }
    }

    /** A TCP reset 256 KiB into a large transfer: both ends fail, neither hangs. */
    @ParameterizedTest
    @ValueSource(strings = {"TLSv1.3", "TLSv1.2"})
    void resetMidTransfer(String protocol) throws Exception {
        byte[] chunk = new byte[64 * 1024];
        End serverWrites = s -> {
            s.getInputStream().read();
            OutputStream out = s.getOutputStream();
            // Loopback socket buffers (the server's send plus the proxy's receive
            // buffer) can swallow several MiB before the proxy gets round to its
            // reset, so 4 MiB could all "succeed" on a slow run (it did under
            // ASan). 64 MiB cannot fit in them: the reset must surface here.
            for (int i = 0; i < 1024; i++) {
                out.write(chunk);
            }
            out.flush();
            throw new AssertionError("wrote 64 MiB into a reset connection");
        };
        End clientReads = s -> {
            s.getOutputStream().write(1);
            s.getOutputStream().flush();
            byte[] got = s.getInputStream().readNBytes(64 * chunk.length);
            throw new AssertionError("read " + got.length + " bytes and no error");
        };
        try (SSLServerSocket ss = (SSLServerSocket) SERVER.getServerSocketFactory().createServerSocket(0, 50, LO)) {
            long[] hs = measure(ss, protocol);
            try (Cut cut = new Cut(ss.getLocalPort(), NO_LIMIT, hs[1] + 256 * 1024, true)) {
                Future<Throwable> srv = server(ss, serverWrites);
                Throwable c = client(cut.port(), protocol, clientReads);
                Throwable s = srv.get(TIMEOUT_MS * 2L, TimeUnit.MILLISECONDS);
                for (Throwable t : new Throwable[] {c, s}) {
                    if (t instanceof AssertionError) {
                        throw (AssertionError) t;
                    }
                }
                assertCleanFailure(protocol + " reset, reading client", c);
                assertCleanFailure(protocol + " reset, writing server", s);
            }
        }
    }
}
