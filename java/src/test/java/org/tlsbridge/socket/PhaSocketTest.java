package org.tlsbridge.socket;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.tlsbridge.socket.SocketBehaviourTest.readLine;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.concurrent.Callable;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.tlsbridge.test.Contexts;
import org.tlsbridge.test.Processes;
import org.tlsbridge.test.TestPki;

/**
 * TLS 1.3 post-handshake authentication as a client socket meets it: a
 * Python {@code ssl} server (pha_server.py, OpenSSL underneath) asks for the
 * certificate after the handshake with verify_client_post_handshake(). Both
 * socket kinds must let the KeyManager choose (or send none) and read on.
 */
class PhaSocketTest {
    private static final InetAddress LO = InetAddress.getLoopbackAddress();
    private static Processes.Child server;
    private static int port;

    @BeforeAll
    static void start() throws Exception {
        TestPki pki = TestPki.get();
        Path script = Path.of(PhaSocketTest.class.getResource("pha_server.py").toURI());
        server = Processes.start(pki.dir, "python3", script.toString(), "rsa.pem", "rsa.key", "ca.pem");
        assertTrue(server.await("PORT ", 20_000), "python3 pha_server.py did not start: " + server.output());
        String out = server.output();
        port = Integer.parseInt(out.substring(out.indexOf("PORT ") + 5).trim().split("\\s")[0]);
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    /** "native": the descriptor socket; "layered": the engine over a plain java.net.Socket. */
    private static SSLSocket connect(SSLContext ctx, String kind, int to) throws IOException {
        if (kind.equals("native")) {
            SSLSocket s = (SSLSocket) ctx.getSocketFactory().createSocket("localhost", to);
            assertInstanceOf(TlsBridgeSocket.class, s);
            return s;
        }
        Socket plain = new Socket(LO, to);
        SSLSocket s = (SSLSocket) ctx.getSocketFactory().createSocket(plain, "localhost", to, true);
        assertInstanceOf(LayeredSslSocket.class, s);
        return s;
    }

    private static void send(SSLSocket s, String line) throws IOException {
        s.getOutputStream().write((line + "\n").getBytes(StandardCharsets.US_ASCII));
    }

    /**
     * Runs the conversation on a thread of its own and closes the socket if
     * it outlives the bound: a socket that spins in read must fail the test,
     * not hang it.
     */
    private static <T> T bounded(SSLSocket s, Callable<T> talk) throws Exception {
        Future<T> f = SocketBehaviourTest.POOL.submit(talk);
        try {
            return f.get(20, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            s.close();
            f.cancel(true);
            return fail("the conversation did not end within 20 s (spinning or waiting): " + server.output());
        }
    }

    private static String conversation(SSLContext ctx, String kind) throws Exception {
        try (SSLSocket s = connect(ctx, kind, port)) {
            s.setSoTimeout(15_000);
            return bounded(s, () -> {
                send(s, "pha");
                assertEquals("requested", readLine(s)); // the CertificateRequest came before these bytes
                send(s, "next");
                String peer = readLine(s);
                send(s, "bye");
                assertEquals("TLSv1.3", s.getSession().getProtocol());
                return peer;
            });
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"native", "layered"})
    void keyManagersCertificateReachesTheServer(String kind) throws Exception {
        assertEquals("peer=commonName=tlsbridge test client",
                conversation(Contexts.clientWithCert(Contexts.TLSBRIDGE), kind));
    }

    @ParameterizedTest
    @ValueSource(strings = {"native", "layered"})
    void withoutAKeyManagerNoCertificateAndTheConnectionGoesOn(String kind) throws Exception {
        assertEquals("peer=none", conversation(Contexts.client(Contexts.TLSBRIDGE), kind));
    }

    /**
     * The server asks, sends a line and then nothing: the read answers the
     * request, returns the line, and the next read waits SO_TIMEOUT without
     * spinning.
     */
    @ParameterizedTest
    @ValueSource(strings = {"native", "layered"})
    void soTimeoutHoldsWhileTheServerIsSilentAfterItsRequest(String kind) throws Exception {
        int timeoutMs = 1000;
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        try (SSLSocket s = connect(Contexts.clientWithCert(Contexts.TLSBRIDGE), kind, port)) {
            s.setSoTimeout(timeoutMs);
            long[] figures = bounded(s, () -> {
                long cpu0 = mx.getCurrentThreadCpuTime();
                long t0 = System.nanoTime();
                send(s, "silent");
                assertEquals("waiting", readLine(s));
                assertThrows(SocketTimeoutException.class, () -> s.getInputStream().read());
                return new long[] {System.nanoTime() - t0, mx.getCurrentThreadCpuTime() - cpu0};
            });
            long wallMs = figures[0] / 1_000_000;
            long cpuMs = figures[1] / 1_000_000;
            System.out.println("PHA then SO_TIMEOUT " + timeoutMs + " ms (" + kind + "): " + wallMs + " ms wall, "
                    + cpuMs + " ms CPU on the reading thread");
            assertTrue(wallMs >= timeoutMs - 50 && wallMs < 10_000, "timed out after " + wallMs + " ms");
            // a spinning read burns the whole wait; a waiting one almost nothing (the
            // certificate task and the signature are a few ms; the bound leaves room for a slow JIT)
            assertTrue(cpuMs < wallMs / 2, "read used " + cpuMs + " ms CPU in " + wallMs + " ms");
        }
    }

    /**
     * tlsbridge on both ends: a layered server socket (the engine underneath)
     * asks with startHandshake() once established and a client certificate
     * is wanted, as the engine's beginHandshake() does; its next write
     * carries the CertificateRequest.
     */
    @ParameterizedTest
    @ValueSource(strings = {"native", "layered"})
    void tlsbridgeLayeredServerAsksAfterTheHandshake(String kind) throws Exception {
        SSLContext sc = Contexts.server(Contexts.TLSBRIDGE, "rsa");
        try (ServerSocket plain = new ServerSocket(0, 5, LO)) {
            Future<String> srv = SocketBehaviourTest.POOL.submit(() -> {
                try (Socket raw = plain.accept();
                        SSLSocket s = (SSLSocket) sc.getSocketFactory().createSocket(raw,
                                new ByteArrayInputStream(new byte[0]), true)) {
                    s.setSoTimeout(15_000);
                    assertEquals("pha", readLine(s));
                    s.setNeedClientAuth(true);
                    s.startHandshake();
                    send(s, "requested");
                    assertEquals("next", readLine(s));
                    X509Certificate peer = (X509Certificate) s.getSession().getPeerCertificates()[0];
                    String subject = peer.getSubjectX500Principal().getName();
                    send(s, "peer=" + subject);
                    return subject;
                }
            });
            try (SSLSocket c = connect(Contexts.clientWithCert(Contexts.TLSBRIDGE), kind, plain.getLocalPort())) {
                c.setSoTimeout(15_000);
                String got = bounded(c, () -> {
                    send(c, "pha");
                    assertEquals("requested", readLine(c));
                    send(c, "next");
                    return readLine(c);
                });
                assertEquals("peer=CN=tlsbridge test client", got);
                assertEquals("CN=tlsbridge test client", srv.get(20, TimeUnit.SECONDS));
            }
        }
    }
}
