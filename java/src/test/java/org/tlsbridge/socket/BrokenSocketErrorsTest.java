package org.tlsbridge.socket;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.tlsbridge.test.Contexts;

/**
 * What each call throws once the handshake has failed (the client refuses
 * the server's certificate) or the socket was closed, for both tlsbridge
 * socket kinds, compared call by call with SunJSSE: read() rethrows an
 * SSLException whose cause is the handshake's failure (callers catch
 * SSLException), write() and startHandshake() a SocketException; a
 * zero-length read or write throws nothing.
 */
class BrokenSocketErrorsTest {
    private static final InetAddress LO = InetAddress.getLoopbackAddress();
    private static SSLServerSocket server;

    @BeforeAll
    static void start() throws IOException {
        server = (SSLServerSocket) Contexts.server(Contexts.sun(), "rsa").getServerSocketFactory()
                .createServerSocket(0, 50, LO);
        Thread t = new Thread(() -> {
            for (;;) {
                try {
                    Socket s = server.accept();
                    SocketBehaviourTest.POOL.submit(() -> {
                        try (s) {
                            s.getInputStream().read();
                        }
                        return null;
                    });
                } catch (IOException e) {
                    return;
                }
            }
        }, "broken-socket-server");
        t.setDaemon(true);
        t.start();
    }

    @AfterAll
    static void stop() throws IOException {
        server.close();
    }

    private static final TrustManager[] REFUSE = {new X509TrustManager() {
        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) {
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            throw new CertificateException("refused by the test");
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return new X509Certificate[0];
        }
    }};

    private interface Call {
        void run() throws IOException;
    }

    private static Throwable thrown(Call c) {
        try {
            c.run();
            return null;
        } catch (Throwable t) {
            return t;
        }
    }

    private static String name(Throwable t) {
        return t == null ? "none" : t.getClass().getSimpleName();
    }

    private static SSLSocket socket(String kind) throws IOException {
        return socket(kind, Contexts.create(kind.equals("sun") ? Contexts.sun() : Contexts.TLSBRIDGE, "TLS", null,
                REFUSE));
    }

    /** "sun" and "native": the factory's own socket; "layered": over a plain java.net.Socket. */
    private static SSLSocket socket(String kind, SSLContext ctx) throws IOException {
        int port = server.getLocalPort();
        if (!kind.equals("layered")) {
            return (SSLSocket) ctx.getSocketFactory().createSocket("localhost", port);
        }
        return (SSLSocket) ctx.getSocketFactory().createSocket(new Socket(LO, port), "localhost", port, true);
    }

    /**
     * The first call meets the refusal; then read, write and startHandshake
     * on the streams taken before. Returns what each threw, and checks
     * that read's SSLException carries the handshake's failure.
     */
    private static List<String> afterFailure(String kind, String first) throws IOException {
        List<String> out = new ArrayList<>();
        try (SSLSocket s = socket(kind)) {
            InputStream in = s.getInputStream();
            OutputStream o = s.getOutputStream();
            Throwable failure = thrown(first.equals("read") ? in::read
                    : first.equals("write") ? () -> o.write(1) : s::startHandshake);
            out.add(first + ": " + name(failure));
            Throwable read = thrown(in::read);
            out.add("read: " + name(read));
            if (read instanceof SSLException) {
                assertSame(failure, read.getCause(), kind + ": read names the handshake's failure");
            }
            out.add("read again: " + name(thrown(in::read)));
            out.add("write: " + name(thrown(() -> o.write(1))));
            out.add("startHandshake: " + name(thrown(s::startHandshake)));
            out.add("empty read: " + name(thrown(() -> in.read(new byte[1], 0, 0))));
            out.add("empty write: " + name(thrown(() -> o.write(new byte[1], 0, 0))));
        }
        return out;
    }

    @ParameterizedTest
    @CsvSource({"native,read", "native,write", "native,startHandshake", "layered,read", "layered,write",
        "layered,startHandshake"})
    void afterAFailedHandshakeEachCallThrowsWhatSunJsseThrows(String kind, String first) throws Exception {
        List<String> sun = afterFailure("sun", first);
        assertEquals(List.of(first + ": SSLHandshakeException", "read: SSLException", "read again: SSLException",
                "write: SocketException", "startHandshake: SocketException", "empty read: none", "empty write: none"),
                sun, "SunJSSE changed");
        assertEquals(sun, afterFailure(kind, first), kind);
    }

    @ParameterizedTest
    @CsvSource({"native", "layered"})
    void afterCloseWriteAndStartHandshakeThrowWhatSunJsseThrows(String kind) throws Exception {
        List<String> seen = new ArrayList<>();
        for (String k : List.of("sun", kind)) {
            try (SSLSocket s = socket(k, Contexts.client(k.equals("sun") ? Contexts.sun() : Contexts.TLSBRIDGE))) {
                s.startHandshake();
                OutputStream o = s.getOutputStream();
                s.close();
                seen.add(k);
                seen.add("write: " + name(thrown(() -> o.write(1))));
                seen.add("startHandshake: " + name(thrown(s::startHandshake)));
                seen.add("empty write: " + name(thrown(() -> o.write(new byte[1], 0, 0))));
            }
        }
        assertEquals(List.of("sun", "write: SocketException", "startHandshake: SocketException", "empty write: none",
                kind, "write: SocketException", "startHandshake: SocketException", "empty write: none"), seen);
    }
}
