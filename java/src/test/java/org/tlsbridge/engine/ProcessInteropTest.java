package org.tlsbridge.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.tlsbridge.test.Contexts;
import org.tlsbridge.test.EngineChannel;
import org.tlsbridge.test.Processes;
import org.tlsbridge.test.TestPki;

/** tlsbridge engines over real loopback sockets against openssl s_server, s_client and curl. */
class ProcessInteropTest {
    private static final TestPki PKI = TestPki.get();

    @ParameterizedTest
    @CsvSource({"TLSv1.3,TLS_AES_128_GCM_SHA256,TLS_AES_128_GCM_SHA256,rsa,true",
        "TLSv1.3,TLS_CHACHA20_POLY1305_SHA256,TLS_CHACHA20_POLY1305_SHA256,ec,false",
        "TLSv1.2,TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,ECDHE-RSA-AES256-GCM-SHA384,rsa,false",
        "TLSv1.2,TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,ECDHE-ECDSA-AES128-GCM-SHA256,ec,true"})
    void clientOfOpensslServer(String protocol, String suite, String osslName, String key, boolean direct)
            throws Exception {
        int port = Processes.freePort();
        try (Processes.Child server = Processes.start(PKI.dir, "openssl", "s_server", "-accept",
                "127.0.0.1:" + port, "-cert", key + ".pem", "-key", key + ".key", "-CAfile", "ca.pem", "-www",
                protocol.equals("TLSv1.3") ? "-tls1_3" : "-tls1_2")) {
            assertTrue(server.await("ACCEPT", 10_000), server.output());
            SSLEngine e = Contexts.client(Contexts.TLSBRIDGE).createSSLEngine("localhost", port);
            e.setUseClientMode(true);
            e.setEnabledCipherSuites(new String[] {suite});
            try (EngineChannel c = new EngineChannel(e,
                    SocketChannel.open(new InetSocketAddress(InetAddress.getLoopbackAddress(), port)), direct)) {
                c.handshake();
                assertEquals(protocol, e.getSession().getProtocol());
                assertEquals(suite, e.getSession().getCipherSuite());
                c.write("GET / HTTP/1.0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                String page = new String(c.readAll(), StandardCharsets.UTF_8);
                assertTrue(page.startsWith("HTTP/1.0 200 ok"), "page: [" + page + "] server: " + server.output());
                assertTrue(page.contains("New, " + protocol + ", Cipher is " + osslName), page);
            }
        }
    }

    /** Accepts one connection and runs the given exchange on a tlsbridge server engine. */
    private interface Exchange {
        void run(EngineChannel c) throws Exception;
    }

    private static CompletableFuture<Void> serveOnce(ServerSocketChannel ss, String key, String suite,
            boolean direct, Exchange x) {
        SSLContext ctx = Contexts.server(Contexts.TLSBRIDGE, key);
        return CompletableFuture.runAsync(() -> {
            try (SocketChannel s = ss.accept()) {
                SSLEngine e = ctx.createSSLEngine();
                e.setUseClientMode(false);
                if (suite != null) {
                    e.setEnabledCipherSuites(new String[] {suite});
                }
                try (EngineChannel c = new EngineChannel(e, s, direct)) {
                    c.handshake();
                    x.run(c);
                }
            } catch (Exception ex) {
                throw new RuntimeException(ex);
            }
        }, r -> {
            Thread t = new Thread(r, "test-server");
            t.setDaemon(true);
            t.start();
        });
    }

    private static String readHead(EngineChannel c) throws Exception {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        while (!b.toString(StandardCharsets.US_ASCII).endsWith("\r\n\r\n")) {
            byte[] one = c.read(1);
            if (one.length == 0) {
                break;
            }
            b.write(one);
        }
        return b.toString(StandardCharsets.US_ASCII);
    }

    @ParameterizedTest
    @CsvSource({"TLSv1.3,TLS_AES_256_GCM_SHA384,-tls1_3,rsa,true", "TLSv1.3,TLS_AES_128_GCM_SHA256,-tls1_3,ec,false",
        "TLSv1.2,TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,-tls1_2,rsa,true",
        "TLSv1.2,TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,-tls1_2,ec,false"})
    void serverForOpensslClient(String protocol, String suite, String flag, String key, boolean direct)
            throws Exception {
        try (ServerSocketChannel ss = ServerSocketChannel.open()) {
            ss.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            int port = ((InetSocketAddress) ss.getLocalAddress()).getPort();
            String[] seen = new String[2];
            CompletableFuture<Void> done = serveOnce(ss, key, suite, direct, c -> {
                byte[] in = c.read(6);
                seen[0] = c.engine.getSession().getProtocol();
                seen[1] = c.engine.getSession().getCipherSuite();
                c.write(new String(in, StandardCharsets.US_ASCII).toUpperCase().getBytes(StandardCharsets.US_ASCII));
            });
            try (Processes.Child client = Processes.start(PKI.dir, "openssl", "s_client", "-connect",
                    "127.0.0.1:" + port, "-CAfile", "ca.pem", "-servername", "localhost", "-verify_return_error",
                    "-ign_eof", flag)) {
                client.process.getOutputStream().write("hello\n".getBytes(StandardCharsets.US_ASCII));
                client.process.getOutputStream().close();
                done.get(30, TimeUnit.SECONDS);
                client.waitFor(20);
                String out = client.output();
                assertTrue(out.contains("HELLO"), out);
                assertTrue(out.contains("Verify return code: 0 (ok)"), out);
                assertTrue(out.contains(protocol), out);
            }
            assertEquals(protocol, seen[0]);
            assertEquals(suite, seen[1]);
        }
    }

    @ParameterizedTest
    @CsvSource({"--tlsv1.3,TLSv1.3,rsa,true", "--tlsv1.2,TLSv1.2,ec,false"})
    void curlDownloadsFromServer(String flag, String protocol, String key, boolean direct) throws Exception {
        byte[] body = new byte[3 * 1024 * 1024 + 7];
        new Random(42).nextBytes(body);
        Path out = Files.createTempFile("curl", ".bin");
        try (ServerSocketChannel ss = ServerSocketChannel.open()) {
            ss.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            int port = ((InetSocketAddress) ss.getLocalAddress()).getPort();
            CompletableFuture<Void> done = serveOnce(ss, key, null, direct, c -> {
                String head = readHead(c);
                assertTrue(head.startsWith("GET /file HTTP/1.1"), head);
                c.write(("HTTP/1.1 200 OK\r\nContent-Length: " + body.length + "\r\nConnection: close\r\n\r\n")
                        .getBytes(StandardCharsets.US_ASCII));
                c.write(body);
            });
            try (Processes.Child curl = Processes.start(PKI.dir, "curl", "-sS", "--cacert", "ca.pem", flag,
                    "--tls-max", protocol.substring(4), "-o", out.toString(), "-w", "%{http_code} %{ssl_verify_result}",
                    "https://localhost:" + port + "/file")) {
                assertEquals(0, curl.waitFor(60), curl.output());
                assertEquals("200 0", curl.output().trim());
            }
            done.get(30, TimeUnit.SECONDS);
            assertArrayEquals(body, Files.readAllBytes(out));
        } finally {
            Files.deleteIfExists(out);
        }
    }
}
