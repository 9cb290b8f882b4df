package org.tlsbridge.socket;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.StandardSocketOptions;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import javax.net.ssl.HandshakeCompletedEvent;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509ExtendedTrustManager;
import org.junit.jupiter.api.Test;
import org.tlsbridge.test.Contexts;
import org.tlsbridge.test.TestPki;

/** Handshake, trust, client auth, parameters, options, close semantics and layered sockets. */
class SocketBehaviourTest {
    /** Threads of their own: blocking socket calls must never wait for a pool slot. */
    static final java.util.concurrent.ExecutorService POOL = java.util.concurrent.Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r);
        t.setDaemon(true);
        return t;
    });

    private static final InetAddress LO = InetAddress.getLoopbackAddress();

    /** Records what a trust manager sees of the socket, then lets the real PKIX manager judge. */
    static final class Watching extends X509ExtendedTrustManager {
        final X509ExtendedTrustManager real = (X509ExtendedTrustManager) TestPki.get().trustManagers()[0];
        final List<String> seen = new CopyOnWriteArrayList<>();

        private void look(Socket s) {
            SSLSocket ssl = (SSLSocket) s;
            seen.add("connected=" + s.isConnected() + " session=" + (ssl.getHandshakeSession() != null));
        }

        @Override
        public void checkClientTrusted(X509Certificate[] c, String a, Socket s) throws CertificateException {
            look(s);
            real.checkClientTrusted(c, a, s);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] c, String a, Socket s) throws CertificateException {
            look(s);
            real.checkServerTrusted(c, a, s);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] c, String a, SSLEngine e) throws CertificateException {
            throw new CertificateException("engine path not expected");
        }

        @Override
        public void checkServerTrusted(X509Certificate[] c, String a, SSLEngine e) throws CertificateException {
            throw new CertificateException("engine path not expected");
        }

        @Override
        public void checkClientTrusted(X509Certificate[] c, String a) throws CertificateException {
            throw new CertificateException("socket path expected");
        }

        @Override
        public void checkServerTrusted(X509Certificate[] c, String a) throws CertificateException {
            throw new CertificateException("socket path expected");
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return real.getAcceptedIssuers();
        }
    }

    /** Runs one accepted connection through fn on another thread. */
    static <T> CompletableFuture<T> serve(ServerSocket ss, Function<SSLSocket, T> fn) {
        return CompletableFuture.supplyAsync(() -> {
            try (SSLSocket s = (SSLSocket) ss.accept()) {
                return fn.apply(s);
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        }, POOL);
    }

    static String readLine(SSLSocket s) {
        try {
            InputStream in = s.getInputStream();
            StringBuilder b = new StringBuilder();
            int c;
            while ((c = in.read()) >= 0 && c != '\n') {
                b.append((char) c);
            }
            return b.toString();
        } catch (IOException e) {
            throw new RuntimeException(e);
        }
    }

    static SSLServerSocket listen(SSLContext ctx) throws IOException {
        return (SSLServerSocket) ctx.getServerSocketFactory().createServerSocket(0, 50, LO);
    }

    @Test
    void managersSeeAConnectedSocketWithAHandshakeSession() throws Exception {
        TestPki pki = TestPki.get();
        Watching serverTm = new Watching();
        Watching clientTm = new Watching();
        SSLContext sc = Contexts.create(Contexts.TLSBRIDGE, "TLS", pki.keyManagers("rsa"), new TrustManager[] {serverTm});
        SSLContext cc = Contexts.create(Contexts.TLSBRIDGE, "TLS", pki.keyManagers("client"),
                new TrustManager[] {clientTm});
        try (SSLServerSocket ss = listen(sc)) {
            ss.setNeedClientAuth(true);
            CompletableFuture<String> peer = serve(ss, s -> {
                try {
                    s.startHandshake();
                    return ((X509Certificate) s.getSession().getPeerCertificates()[0]).getSubjectX500Principal()
                            .getName();
                } catch (IOException e) {
                    throw new RuntimeException(e);
                }
            });
            List<HandshakeCompletedEvent> events = new CopyOnWriteArrayList<>();
            try (SSLSocket c = (SSLSocket) cc.getSocketFactory().createSocket("localhost", ss.getLocalPort())) {
                SSLParameters p = c.getSSLParameters();
                p.setEndpointIdentificationAlgorithm("HTTPS");
                c.setSSLParameters(p);
                c.addHandshakeCompletedListener(events::add);
                assertNull(c.getHandshakeSession());
                c.startHandshake();
                assertEquals("CN=tlsbridge test client", peer.get(10, TimeUnit.SECONDS));
                assertNull(c.getHandshakeSession());
                assertThrows(IllegalArgumentException.class, () -> c.setSSLParameters(new SSLParameters()));
                assertThrows(IllegalArgumentException.class, () -> c.setUseClientMode(false));
                for (int i = 0; i < 100 && events.isEmpty(); i++) {
                    Thread.sleep(20);
                }
                assertEquals(1, events.size());
                assertEquals(c, events.get(0).getSocket());
                assertEquals(c.getSession(), events.get(0).getSession());
            }
        }
        assertEquals(List.of("connected=true session=true"), clientTm.seen);
        assertEquals(List.of("connected=true session=true"), serverTm.seen);
    }

    @Test
    void untrustedServerFailsWithTheTrustManagersCause() throws Exception {
        SSLContext sc = Contexts.server(Contexts.TLSBRIDGE, "other");
        SSLContext cc = Contexts.client(Contexts.TLSBRIDGE);
        try (SSLServerSocket ss = listen(sc)) {
            CompletableFuture<Throwable> server = serve(ss, s -> {
                try {
                    s.startHandshake();
                    return null;
                } catch (IOException e) {
                    return e;
                }
            });
            try (SSLSocket c = (SSLSocket) cc.getSocketFactory().createSocket("localhost", ss.getLocalPort())) {
                SSLParameters p = c.getSSLParameters();
                p.setEndpointIdentificationAlgorithm("HTTPS");
                c.setSSLParameters(p);
                SSLHandshakeException e = assertThrows(SSLHandshakeException.class, c::startHandshake);
                assertInstanceOf(CertificateException.class, e.getCause(), "cause: " + e.getCause());
                assertTrue(c.isClosed(), "a failed handshake closes the socket");
                assertEquals("SSL_NULL_WITH_NULL_NULL", c.getSession().getCipherSuite());
            }
            assertNotNull(server.get(10, TimeUnit.SECONDS), "the server sees the failure too");
        }
    }

    @Test
    void missingClientCertificateIsRefused() throws Exception {
        try (SSLServerSocket ss = listen(Contexts.server(Contexts.TLSBRIDGE, "ec"))) {
            ss.setNeedClientAuth(true);
            CompletableFuture<Throwable> server = serve(ss, s -> {
                try {
                    s.startHandshake();
                    s.getInputStream().read();
                    return null;
                } catch (IOException e) {
                    return e;
                }
            });
            try (SSLSocket c = (SSLSocket) Contexts.client(Contexts.TLSBRIDGE).getSocketFactory()
                    .createSocket("localhost", ss.getLocalPort())) {
                assertThrows(IOException.class, () -> {
                    c.startHandshake();
                    c.getOutputStream().write(1);
                    c.getInputStream().read(); // TLS 1.3 reports the refusal after the client's Finished
                });
            }
            assertInstanceOf(SSLHandshakeException.class, server.get(10, TimeUnit.SECONDS));
        }
    }

    @Test
    void suitesProtocolsAndHalfClose() throws Exception {
        try (SSLServerSocket ss = listen(Contexts.server(Contexts.TLSBRIDGE, "rsa"))) {
            CompletableFuture<String> server = serve(ss, s -> {
                try {
                    String line = readLine(s);
                    assertEquals(-1, s.getInputStream().read(), "shutdownOutput sent close_notify");
                    s.getOutputStream().write(("echo " + line + "\n").getBytes(StandardCharsets.US_ASCII));
                    return s.getSession().getCipherSuite();
                } catch (IOException e) {
                    throw new RuntimeException(e);
                }
            });
            SSLSocket c = (SSLSocket) Contexts.client(Contexts.TLSBRIDGE).getSocketFactory().createSocket();
            c.setEnabledProtocols(new String[] {"TLSv1.2"});
            c.setEnabledCipherSuites(new String[] {"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"});
            c.connect(new InetSocketAddress("localhost", ss.getLocalPort()), 5000);
            c.getOutputStream().write("hi\n".getBytes(StandardCharsets.US_ASCII));
            c.shutdownOutput();
            assertTrue(c.isOutputShutdown());
            assertThrows(java.net.SocketException.class, () -> c.getOutputStream().write(1));
            assertEquals("echo hi", readLine(c));
            assertEquals("TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", server.get(10, TimeUnit.SECONDS));
            assertEquals("TLSv1.2", c.getSession().getProtocol());
            c.close();
            assertTrue(c.isClosed());
            assertTrue(c.isConnected(), "isConnected stays true after close, as java.net");
        }
    }

    @Test
    void optionsAndAddresses() throws Exception {
        try (SSLServerSocket ss = listen(Contexts.server(Contexts.TLSBRIDGE, "rsa"))) {
            assertTrue(ss.getReuseAddress());
            assertEquals(LO, ss.getInetAddress());
            CompletableFuture<String> server = serve(ss, SocketBehaviourTest::readLine);
            Socket c = Contexts.client(Contexts.TLSBRIDGE).getSocketFactory().createSocket();
            assertFalse(c.isBound());
            assertEquals(-1, c.getLocalPort());
            assertNull(c.getRemoteSocketAddress());
            c.setTcpNoDelay(true);
            c.setKeepAlive(true);
            c.setSoLinger(true, 3);
            c.setReceiveBufferSize(1 << 16);
            c.setOption(StandardSocketOptions.SO_SNDBUF, 1 << 16);
            c.connect(new InetSocketAddress(LO, ss.getLocalPort()));
            assertTrue(c.getTcpNoDelay());
            assertTrue(c.getKeepAlive());
            assertEquals(3, c.getSoLinger());
            assertTrue(c.getReceiveBufferSize() >= 1 << 16);
            assertTrue(c.getOption(StandardSocketOptions.SO_SNDBUF) >= 1 << 16);
            assertEquals(new InetSocketAddress(LO, ss.getLocalPort()), c.getRemoteSocketAddress());
            assertEquals(LO, c.getLocalAddress());
            assertTrue(c.getLocalPort() > 0);
            c.setSoLinger(false, 0);
            assertEquals(-1, c.getSoLinger());
            c.getOutputStream().write("x\n".getBytes(StandardCharsets.US_ASCII));
            assertEquals("x", server.get(10, TimeUnit.SECONDS));
            int port = c.getLocalPort();
            c.close();
            assertEquals(port, c.getLocalPort(), "the local port is still known after close");
            assertThrows(java.net.SocketException.class, () -> c.setTcpNoDelay(true));
        }
    }

    @Test
    void refusedConnect() throws Exception {
        int port;
        try (ServerSocket probe = new ServerSocket(0, 1, LO)) {
            port = probe.getLocalPort();
        }
        SSLContext cc = Contexts.client(Contexts.TLSBRIDGE);
        assertThrows(ConnectException.class, () -> cc.getSocketFactory().createSocket(LO, port));
    }

    private static long openFds() throws IOException {
        try (var s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count();
        }
    }

    @Test
    void noDescriptorLeak() throws Exception {
        SSLContext sc = Contexts.server(Contexts.TLSBRIDGE, "rsa");
        SSLContext cc = Contexts.client(Contexts.TLSBRIDGE);
        // warm up class loading and the session contexts before counting
        oneExchange(sc, cc, 2);
        long before = openFds();
        oneExchange(sc, cc, 50);
        long after = openFds();
        for (int i = 0; i < 50 && after > before; i++) {
            Thread.sleep(20);
            after = openFds();
        }
        assertEquals(before, after, "descriptors before and after 50 connections and a failed handshake");
    }

    private static void oneExchange(SSLContext sc, SSLContext cc, int n) throws Exception {
        try (SSLServerSocket ss = listen(sc)) {
            for (int i = 0; i < n; i++) {
                CompletableFuture<String> server = serve(ss, SocketBehaviourTest::readLine);
                try (Socket c = cc.getSocketFactory().createSocket("localhost", ss.getLocalPort())) {
                    c.getOutputStream().write("ping\n".getBytes(StandardCharsets.US_ASCII));
                    assertEquals("ping", server.get(10, TimeUnit.SECONDS));
                }
            }
            // a handshake that fails half way must not leak either
            CompletableFuture<String> server = serve(ss, s -> {
                try {
                    s.startHandshake();
                    return "done";
                } catch (IOException e) {
                    return "failed";
                }
            });
            try (Socket plain = new Socket(LO, ss.getLocalPort())) {
                plain.getOutputStream().write("GET / HTTP/1.0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                assertEquals("failed", server.get(10, TimeUnit.SECONDS));
            }
        }
    }

    @Test
    void layeredClientAndServer() throws Exception {
        SSLContext sc = Contexts.server(Contexts.TLSBRIDGE, "rsa");
        SSLContext cc = Contexts.client(Contexts.TLSBRIDGE);
        // layered client over a plain socket, native server
        try (SSLServerSocket ss = listen(sc)) {
            CompletableFuture<String> server = serve(ss, s -> {
                String line = readLine(s);
                try {
                    s.getOutputStream().write(("back " + line + "\n").getBytes(StandardCharsets.US_ASCII));
                } catch (IOException e) {
                    throw new RuntimeException(e);
                }
                return line;
            });
            Socket plain = new Socket(LO, ss.getLocalPort());
            SSLSocket c = (SSLSocket) cc.getSocketFactory().createSocket(plain, "localhost", ss.getLocalPort(), true);
            assertInstanceOf(LayeredSslSocket.class, c);
            byte[] big = new byte[100_000];
            java.util.Arrays.fill(big, (byte) 'z');
            c.getOutputStream().write(("layered " + new String(big, StandardCharsets.US_ASCII) + "\n")
                    .getBytes(StandardCharsets.US_ASCII));
            assertEquals("back layered " + new String(big, StandardCharsets.US_ASCII), readLine(c));
            assertEquals("TLSv1.3", c.getSession().getProtocol());
            c.close();
            assertTrue(plain.isClosed(), "autoClose closes the base socket");
            server.get(10, TimeUnit.SECONDS);
        }
        // layered server over a plain accepted socket whose first bytes were already read
        try (ServerSocket plainServer = new ServerSocket(0, 5, LO)) {
            CompletableFuture<String> server = CompletableFuture.supplyAsync(() -> {
                try (Socket raw = plainServer.accept()) {
                    byte[] first = raw.getInputStream().readNBytes(5); // the record header, e.g. to sniff SNI
                    assertEquals(22, first[0], "a handshake record");
                    SSLSocket s = (SSLSocket) sc.getSocketFactory().createSocket(raw,
                            new ByteArrayInputStream(first), true);
                    assertFalse(s.getUseClientMode());
                    String line = readLine(s);
                    s.getOutputStream().write("ok\n".getBytes(StandardCharsets.US_ASCII));
                    s.close();
                    return line;
                } catch (IOException e) {
                    throw new RuntimeException(e);
                }
            }, POOL);
            try (SSLSocket c = (SSLSocket) cc.getSocketFactory().createSocket("localhost",
                    plainServer.getLocalPort())) {
                c.getOutputStream().write("to layered server\n".getBytes(StandardCharsets.US_ASCII));
                assertEquals("ok", readLine(c));
                assertArrayEquals(new byte[0], c.getInputStream().readAllBytes(), "close_notify, then EOF");
            }
            assertEquals("to layered server", server.get(10, TimeUnit.SECONDS));
        }
    }

    /** HttpsURLConnection asks the factory for an unconnected socket and connects it: the native path. */
    @Test
    void httpsUrlConnectionUsesTheNativeSocket() throws Exception {
        SSLContext cc = Contexts.client(Contexts.TLSBRIDGE);
        List<Socket> made = new CopyOnWriteArrayList<>();
        javax.net.ssl.SSLSocketFactory f = cc.getSocketFactory();
        javax.net.ssl.SSLSocketFactory recording = new javax.net.ssl.SSLSocketFactory() {
            private Socket note(Socket s) {
                made.add(s);
                return s;
            }

            @Override
            public String[] getDefaultCipherSuites() {
                return f.getDefaultCipherSuites();
            }

            @Override
            public String[] getSupportedCipherSuites() {
                return f.getSupportedCipherSuites();
            }

            @Override
            public Socket createSocket() throws IOException {
                return note(f.createSocket());
            }

            @Override
            public Socket createSocket(Socket s, String h, int p, boolean a) throws IOException {
                return note(f.createSocket(s, h, p, a));
            }

            @Override
            public Socket createSocket(String h, int p) throws IOException {
                return note(f.createSocket(h, p));
            }

            @Override
            public Socket createSocket(String h, int p, InetAddress l, int lp) throws IOException {
                return note(f.createSocket(h, p, l, lp));
            }

            @Override
            public Socket createSocket(InetAddress h, int p) throws IOException {
                return note(f.createSocket(h, p));
            }

            @Override
            public Socket createSocket(InetAddress h, int p, InetAddress l, int lp) throws IOException {
                return note(f.createSocket(h, p, l, lp));
            }
        };
        try (SSLServerSocket ss = listen(Contexts.server(Contexts.TLSBRIDGE, "rsa"))) {
            CompletableFuture<String> server = serve(ss, s -> {
                String first = readLine(s).trim();
                String line;
                do {
                    line = readLine(s).trim();
                } while (!line.isEmpty());
                try {
                    s.getOutputStream().write("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello"
                            .getBytes(StandardCharsets.US_ASCII));
                } catch (IOException e) {
                    throw new RuntimeException(e);
                }
                return first;
            });
            javax.net.ssl.HttpsURLConnection c = (javax.net.ssl.HttpsURLConnection) new java.net.URL(
                    "https://localhost:" + ss.getLocalPort() + "/x").openConnection(java.net.Proxy.NO_PROXY);
            c.setSSLSocketFactory(recording);
            c.setConnectTimeout(5000);
            c.setReadTimeout(5000);
            assertEquals(200, c.getResponseCode());
            assertEquals("TLS_AES_128_GCM_SHA256", c.getCipherSuite());
            try (InputStream in = c.getInputStream()) {
                assertEquals("hello", new String(in.readAllBytes(), StandardCharsets.US_ASCII));
            }
            c.disconnect();
            assertEquals("GET /x HTTP/1.1", server.get(10, TimeUnit.SECONDS));
            assertEquals(1, made.size());
            assertInstanceOf(TlsBridgeSocket.class, made.get(0));
        }
    }
}
