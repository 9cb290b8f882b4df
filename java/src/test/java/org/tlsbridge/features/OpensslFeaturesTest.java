package org.tlsbridge.features;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import javax.net.ssl.ExtendedSSLSession;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.tlsbridge.TlsBridgeProvider;
import org.tlsbridge.test.Contexts;
import org.tlsbridge.test.EngineChannel;
import org.tlsbridge.test.OneShotServer;
import org.tlsbridge.test.Processes;
import org.tlsbridge.test.TestPki;

/** The TLS features seen from OpenSSL's own command-line peers. */
class OpensslFeaturesTest {
    private static final TestPki PKI = TestPki.get();

    /** Runs the system's s_client against a tlsbridge server that greets and closes; returns its output. */
    private static String sClient(SSLContext server, Consumer<SSLEngine> setup, OneShotServer.Exchange x,
            String... args) throws Exception {
        return OpensslPeers.sClient("openssl", server, setup, x, args);
    }

    private static Consumer<SSLEngine> alpn(String... protocols) {
        return e -> {
            SSLParameters p = e.getSSLParameters();
            p.setApplicationProtocols(protocols);
            e.setSSLParameters(p);
        };
    }

    @Test
    void sClientNegotiatesH2() throws Exception {
        String out = sClient(Contexts.server(Contexts.TLSBRIDGE, "rsa"), alpn("h2", "http/1.1"), null,
                "-alpn", "h2");
        assertTrue(out.contains("ALPN protocol: h2"), out);
        java.util.concurrent.ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(
                java.util.concurrent.ExecutionException.class,
                () -> sClient(Contexts.server(Contexts.TLSBRIDGE, "rsa"), alpn("h2"), null, "-alpn", "spdy/3"));
        assertTrue(String.valueOf(e.getCause()).contains("no application protocol"), String.valueOf(e.getCause()));
    }

    /** curl --http2 negotiates h2 (the full HTTP/2 exchange is in the Tomcat suite). */
    @Test
    void curlNegotiatesH2() throws Exception {
        try (OneShotServer srv = new OneShotServer()) {
            String[] alpn = new String[1];
            CompletableFuture<Void> done = srv.serve(Contexts.server(Contexts.TLSBRIDGE, "rsa"), 1, true,
                    alpn("h2", "http/1.1"), c -> alpn[0] = c.engine.getApplicationProtocol());
            try (Processes.Child curl = Processes.start(PKI.dir, "curl", "-sv", "--http2", "--cacert", "ca.pem",
                    "--max-time", "5", "https://localhost:" + srv.port + "/")) {
                curl.waitFor(20);
                assertTrue(curl.output().contains("ALPN: server accepted h2"), curl.output());
            }
            done.get(30, TimeUnit.SECONDS);
            assertEquals("h2", alpn[0]);
        }
    }

    @Test
    void clientNegotiatesWithSServer() throws Exception {
        int port = Processes.freePort();
        try (Processes.Child s = Processes.start(PKI.dir, "openssl", "s_server", "-accept", "127.0.0.1:" + port,
                "-cert", "rsa.pem", "-key", "rsa.key", "-alpn", "http/1.1,h2", "-www")) {
            assertTrue(s.await("ACCEPT", 10_000), s.output());
            SSLEngine e = Contexts.client(Contexts.TLSBRIDGE).createSSLEngine("localhost", port);
            e.setUseClientMode(true);
            alpn("h2", "http/1.1").accept(e);
            try (EngineChannel c = connect(e, port)) {
                c.handshake();
                // s_server picks from the client's list by its own order
                assertEquals("http/1.1", e.getApplicationProtocol());
            }
        }
    }

    private static EngineChannel connect(SSLEngine e, int port) throws Exception {
        return new EngineChannel(e, SocketChannel.open(new InetSocketAddress(InetAddress.getLoopbackAddress(), port)),
                true);
    }

    @Test
    void oneContextTwoNamesRsaAndEc() throws Exception {
        SSLContext server = Contexts.server(Contexts.TLSBRIDGE, "other", "ec");
        String out = sClient(server, null, null, "-servername", "other.example");
        assertTrue(out.contains("subject=CN = other.example"), out);
        assertTrue(out.contains("Peer signature type: RSA"), out);
        out = sClient(server, null, null, "-servername", "localhost");
        assertTrue(out.contains("subject=CN = localhost"), out);
        assertTrue(out.contains("Peer signature type: ECDSA"), out);
    }

    /** Two s_client runs: the second resumes the first's session from a file. */
    private static String[] resumeTwice(SSLContext server, String... flags) throws Exception {
        Path sess = Files.createTempFile("sess", ".pem");
        try {
            List<String> a = new ArrayList<>(List.of(flags));
            a.addAll(List.of("-sess_out", sess.toString()));
            String first = sClient(server, null, null, a.toArray(new String[0]));
            List<String> b = new ArrayList<>(List.of(flags));
            b.addAll(List.of("-sess_in", sess.toString()));
            String second = sClient(server, null, null, b.toArray(new String[0]));
            return new String[] {first, second};
        } finally {
            Files.deleteIfExists(sess);
        }
    }

    @ParameterizedTest
    @CsvSource({"-tls1_2,true", "-tls1_2,false", "-tls1_3,false"})
    void sClientResumes(String version, boolean cacheNotTickets) throws Exception {
        SSLContext server = Contexts.server(Contexts.TLSBRIDGE, "rsa");
        String[] runs = cacheNotTickets ? resumeTwice(server, version, "-no_ticket") : resumeTwice(server, version);
        assertTrue(runs[0].contains("New, TLSv1."), runs[0]);
        assertTrue(runs[1].contains("Reused, TLSv1."), runs[1]);
    }

    @Test
    void serverCacheSizeAndTimeoutEvict() throws Exception {
        SSLContext server = Contexts.server(Contexts.TLSBRIDGE, "rsa");
        server.getServerSessionContext().setSessionCacheSize(1);
        Path a = Files.createTempFile("a", ".pem");
        Path b = Files.createTempFile("b", ".pem");
        try {
            sClient(server, null, null, "-tls1_2", "-no_ticket", "-sess_out", a.toString());
            sClient(server, null, null, "-tls1_2", "-no_ticket", "-sess_out", b.toString());
            // b is the one session a cache of one keeps; a was pushed out by it
            String kept = sClient(server, null, null, "-tls1_2", "-no_ticket", "-sess_in", b.toString());
            assertTrue(kept.contains("Reused, TLSv1.2"), kept);
            String evicted = sClient(server, null, null, "-tls1_2", "-no_ticket", "-sess_in", a.toString());
            assertTrue(evicted.contains("New, TLSv1.2"), "evicted: " + evicted);

            server.getServerSessionContext().setSessionCacheSize(100);
            server.getServerSessionContext().setSessionTimeout(1);
            sClient(server, null, null, "-tls1_2", "-no_ticket", "-sess_out", a.toString());
            Thread.sleep(2200);
            String expired = sClient(server, null, null, "-tls1_2", "-no_ticket", "-sess_in", a.toString());
            assertTrue(expired.contains("New, TLSv1.2"), expired);
        } finally {
            Files.deleteIfExists(a);
            Files.deleteIfExists(b);
        }
    }

    @ParameterizedTest
    @CsvSource({"-tls1_2", "-tls1_3"})
    void clientResumesAgainstSServer(String version) throws Exception {
        int port = Processes.freePort();
        try (Processes.Child s = Processes.start(PKI.dir, "openssl", "s_server", "-accept", "127.0.0.1:" + port,
                "-cert", "rsa.pem", "-key", "rsa.key", "-www", version)) {
            assertTrue(s.await("ACCEPT", 10_000), s.output());
            SSLContext client = Contexts.client(Contexts.TLSBRIDGE);
            boolean[] resumed = new boolean[2];
            for (int i = 0; i < 2; i++) {
                SSLEngine e = client.createSSLEngine("localhost", port);
                e.setUseClientMode(true);
                try (EngineChannel c = connect(e, port)) {
                    c.handshake();
                    c.write("GET / HTTP/1.0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                    String page = new String(c.readAll(), StandardCharsets.UTF_8);
                    assertTrue(page.contains(i == 0 ? "New, TLSv1." : "Reused, TLSv1."), page);
                    resumed[i] = TlsBridgeProvider.isResumed(e.getSession());
                }
            }
            assertFalse(resumed[0]);
            assertTrue(resumed[1]);
        }
    }

    @Test
    void postHandshakeAuthWithEnablePha() throws Exception {
        X509Certificate[] got = new X509Certificate[1];
        String out = sClient(Contexts.server(Contexts.TLSBRIDGE, "rsa"), null, c -> {
            c.write("first\n".getBytes(StandardCharsets.US_ASCII));
            c.engine.setNeedClientAuth(true);
            c.handshake(); // beginHandshake on an established TLS 1.3 server: CertificateRequest
            got[0] = (X509Certificate) c.engine.getSession().getPeerCertificates()[0];
            c.write("second\n".getBytes(StandardCharsets.US_ASCII));
        }, "-tls1_3", "-enable_pha", "-cert", "client.pem", "-key", "client.key");
        assertTrue(out.contains("second"), out);
        assertEquals("CN=tlsbridge test client", got[0].getSubjectX500Principal().getName());
    }

    @ParameterizedTest
    @CsvSource({"-tls1_3,certificate required", "-tls1_2,handshake failure"})
    void needClientAuthRefusesWithTheRightAlert(String version, String alert) throws Exception {
        java.util.concurrent.ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(
                java.util.concurrent.ExecutionException.class,
                () -> sClient(Contexts.server(Contexts.TLSBRIDGE, "rsa"), en -> en.setNeedClientAuth(true), null,
                        version));
        assertTrue(String.valueOf(e.getCause()).contains("peer did not return a certificate"),
                String.valueOf(e.getCause()));
        // and a tlsbridge client without a certificate, refused by s_server -Verify
        int port = Processes.freePort();
        try (Processes.Child s = Processes.start(PKI.dir, "openssl", "s_server", "-accept", "127.0.0.1:" + port,
                "-cert", "rsa.pem", "-key", "rsa.key", "-CAfile", "ca.pem", "-Verify", "1", "-www", version)) {
            assertTrue(s.await("ACCEPT", 10_000), s.output());
            SSLEngine en = Contexts.client(Contexts.TLSBRIDGE).createSSLEngine("localhost", port);
            en.setUseClientMode(true);
            try (EngineChannel c = connect(en, port)) {
                Exception x = org.junit.jupiter.api.Assertions.assertThrows(Exception.class, () -> {
                    c.handshake();
                    c.write("GET / HTTP/1.0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                    c.readAll();
                });
                assertTrue(String.valueOf(x.getMessage()).contains(alert), String.valueOf(x));
            }
        }
    }

    private static Path ocspResponse() throws Exception {
        Path d = PKI.dir;
        if (!Files.exists(d.resolve("ocsp.der"))) {
            String serial = Files.readString(d.resolve("ca.srl")).trim();
            TestPki.run(d, "openssl", "x509", "-in", "rsa.pem", "-noout", "-serial", "-out", "rsa.serial");
            serial = Files.readString(d.resolve("rsa.serial")).trim().replace("serial=", "");
            Files.writeString(d.resolve("index.txt"), "V\t491231235959Z\t\t" + serial + "\tunknown\t/CN=localhost\n");
            TestPki.run(d, "openssl", "ocsp", "-index", "index.txt", "-rsigner", "ca.pem", "-rkey", "ca.key",
                    "-CA", "ca.pem", "-issuer", "ca.pem", "-cert", "rsa.pem", "-respout", "ocsp.der", "-ndays", "1");
        }
        Path dir = Files.createTempDirectory("ocsp");
        Files.copy(d.resolve("ocsp.der"), dir.resolve("rsa.der"));
        return dir;
    }

    @Test
    void staplesAConfiguredOcspResponse() throws Exception {
        Path dir = ocspResponse();
        System.setProperty("tlsbridge.ocsp.dir", dir.toString());
        try {
            String out = sClient(Contexts.server(Contexts.TLSBRIDGE, "rsa"), null, null, "-status");
            assertTrue(out.contains("OCSP Response Status: successful"), "stapled: " + out);
            assertTrue(out.contains("Cert Status: good"), out);
            // and a tlsbridge client sees it
            try (OneShotServer srv = new OneShotServer()) {
                CompletableFuture<Void> done = srv.serve(Contexts.server(Contexts.TLSBRIDGE, "rsa"), 1, false, null,
                        c -> c.write("x".getBytes(StandardCharsets.US_ASCII)));
                SSLEngine e = Contexts.client(Contexts.TLSBRIDGE).createSSLEngine("localhost", srv.port);
                e.setUseClientMode(true);
                try (EngineChannel c = connect(e, srv.port)) {
                    c.handshake();
                    List<byte[]> staples = ((ExtendedSSLSession) e.getSession()).getStatusResponses();
                    assertEquals(1, staples.size());
                    assertArrayEquals(Files.readAllBytes(dir.resolve("rsa.der")), staples.get(0));
                    c.read(1);
                }
                done.get(30, TimeUnit.SECONDS);
            }
        } finally {
            System.clearProperty("tlsbridge.ocsp.dir");
        }
    }

    @ParameterizedTest
    @CsvSource({"-tls1_3", "-tls1_2"})
    void keyLogMatchesOpenssl(String version) throws Exception {
        Path ours = Files.createTempFile("ours", ".keylog");
        Path theirs = Files.createTempFile("theirs", ".keylog");
        SSLContext server;
        System.setProperty("tlsbridge.keylog", ours.toString());
        try {
            server = Contexts.server(Contexts.TLSBRIDGE, "rsa");
        } finally {
            System.clearProperty("tlsbridge.keylog");
        }
        sClient(server, null, null, version, "-keylogfile", theirs.toString());
        Set<String> a = lines(ours);
        Set<String> b = lines(theirs);
        assertFalse(a.isEmpty());
        assertEquals(b, a);
    }

    private static Set<String> lines(Path p) throws Exception {
        Set<String> out = new HashSet<>();
        for (String l : Files.readAllLines(p)) {
            if (!l.isBlank() && !l.startsWith("#")) {
                out.add(l.trim());
            }
        }
        return out;
    }

    /** SSLParameters.setNamedGroups exists from JDK 20; on 17 the same choice comes from jdk.tls.namedGroups. */
    @Test
    void namedGroupsThroughSslParameters() throws Exception {
        java.lang.reflect.Method set;
        try {
            set = SSLParameters.class.getMethod("setNamedGroups", String[].class);
        } catch (NoSuchMethodException e) {
            System.out.println("JDK " + Runtime.version() + " has no SSLParameters.setNamedGroups: "
                    + "namedGroupsFromJdkProperty covers this JDK");
            namedGroupsFromJdkProperty();
            return;
        }
        java.lang.reflect.Method setter = set;
        String out = sClient(Contexts.server(Contexts.TLSBRIDGE, "rsa"), e -> {
            SSLParameters p = e.getSSLParameters();
            try {
                setter.invoke(p, (Object) new String[] {"secp384r1"});
            } catch (ReflectiveOperationException x) {
                throw new IllegalStateException(x);
            }
            e.setSSLParameters(p);
        }, null, "-tls1_3");
        assertTrue(out.contains("Server Temp Key: ECDH, secp384r1") || out.contains("P-384"), out);
    }

    @Test
    void namedGroupsFromJdkProperty() throws Exception {
        System.setProperty("jdk.tls.namedGroups", "secp384r1");
        try {
            String out = sClient(Contexts.server(Contexts.TLSBRIDGE, "rsa"), null, null, "-tls1_3");
            assertTrue(out.contains("Server Temp Key: ECDH, secp384r1") || out.contains("P-384"), out);
        } finally {
            System.clearProperty("jdk.tls.namedGroups");
        }
    }
}
