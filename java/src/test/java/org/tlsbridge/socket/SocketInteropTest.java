package org.tlsbridge.socket;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.Provider;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.tlsbridge.test.Contexts;
import org.tlsbridge.test.Processes;
import org.tlsbridge.test.TestPki;

/**
 * tlsbridge sockets against tlsbridge, SunJSSE and openssl s_server, TLS 1.2
 * and 1.3, with payloads up to 16 MiB echoed and compared byte for byte.
 */
class SocketInteropTest {
    /** Threads of their own: blocking socket calls must never wait for a pool slot. */
    static final java.util.concurrent.ExecutorService POOL = java.util.concurrent.Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r);
        t.setDaemon(true);
        return t;
    });

    private static final int[] SIZES = {1, 16383, 16384, 16385, 1 << 20};

    static Stream<Arguments> pairs() {
        List<Arguments> out = new ArrayList<>();
        for (String pair : new String[] {"tlsbridge-tlsbridge", "tlsbridge-sunjsse", "sunjsse-tlsbridge"}) {
            for (String proto : new String[] {"TLSv1.2", "TLSv1.3"}) {
                out.add(Arguments.of(pair, proto));
            }
        }
        return out.stream();
    }

    static Provider provider(String name) {
        return name.equals("tlsbridge") ? Contexts.TLSBRIDGE : Contexts.sun();
    }

    /** An echo server: reads length-prefixed messages and sends each back, until a zero length. */
    static CompletableFuture<Void> echoServer(ServerSocket ss) {
        return CompletableFuture.runAsync(() -> {
            try (SSLSocket s = (SSLSocket) ss.accept()) {
                DataInputStream in = new DataInputStream(s.getInputStream());
                DataOutputStream out = new DataOutputStream(s.getOutputStream());
                for (;;) {
                    int n = in.readInt();
                    if (n == 0) {
                        break;
                    }
                    byte[] b = new byte[n];
                    in.readFully(b);
                    out.writeInt(n);
                    out.write(b);
                    out.flush();
                }
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        }, POOL);
    }

    /** Sends msg while a second thread reads the echo, so large messages cannot deadlock on full buffers. */
    static byte[] roundTrip(SSLSocket c, byte[] msg) throws Exception {
        DataInputStream in = new DataInputStream(c.getInputStream());
        CompletableFuture<byte[]> back = CompletableFuture.supplyAsync(() -> {
            try {
                byte[] b = new byte[in.readInt()];
                in.readFully(b);
                return b;
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        }, POOL);
        DataOutputStream out = new DataOutputStream(c.getOutputStream());
        out.writeInt(msg.length);
        out.write(msg);
        out.flush();
        return back.get(60, TimeUnit.SECONDS);
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("pairs")
    void echo(String pair, String protocol) throws Exception {
        String[] sides = pair.split("-");
        SSLContext sc = Contexts.server(provider(sides[1]), "rsa");
        SSLContext cc = Contexts.client(provider(sides[0]));
        try (SSLServerSocket ss = (SSLServerSocket) sc.getServerSocketFactory().createServerSocket(0, 50,
                InetAddress.getLoopbackAddress())) {
            CompletableFuture<Void> server = echoServer(ss);
            try (SSLSocket c = (SSLSocket) cc.getSocketFactory().createSocket("localhost", ss.getLocalPort())) {
                c.setEnabledProtocols(new String[] {protocol});
                c.startHandshake();
                assertEquals(protocol, c.getSession().getProtocol());
                assertEquals("CN=localhost", ((java.security.cert.X509Certificate) c.getSession()
                        .getPeerCertificates()[0]).getSubjectX500Principal().getName());
                Random rnd = new Random(pair.hashCode() ^ protocol.hashCode());
                List<Integer> sizes = new ArrayList<>();
                for (int s : SIZES) {
                    sizes.add(s);
                }
                sizes.add(16 << 20);
                for (int size : sizes) {
                    byte[] msg = new byte[size];
                    rnd.nextBytes(msg);
                    assertArrayEquals(msg, roundTrip(c, msg), "echo of " + size + " bytes");
                }
                new DataOutputStream(c.getOutputStream()).writeInt(0);
            }
            server.get(60, TimeUnit.SECONDS);
        }
    }

    /** A tlsbridge client socket downloading 16 MiB from openssl s_server -WWW. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("protocols")
    void againstOpensslServer(String protocol) throws Exception {
        TestPki pki = TestPki.get();
        Path dir = Files.createTempDirectory("tlsbridge-www");
        byte[] file = new byte[16 << 20];
        new Random(7).nextBytes(file);
        Files.write(dir.resolve("data.bin"), file);
        int port;
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = probe.getLocalPort();
        }
        Process p = Processes.builder("openssl", "s_server", "-accept", "127.0.0.1:" + port, "-WWW", "-cert",
                pki.file("rsa.pem").toString(), "-key", pki.file("rsa.key").toString(), "-naccept", "1")
                .directory(dir.toFile()).redirectErrorStream(true).start();
        try {
            InputStream pout = p.getInputStream();
            StringBuilder banner = new StringBuilder();
            while (!banner.toString().contains("ACCEPT")) {
                int ch = pout.read();
                assertTrue(ch >= 0, "s_server exited: " + banner);
                banner.append((char) ch);
            }
            SSLContext cc = Contexts.client(Contexts.TLSBRIDGE);
            try (SSLSocket c = (SSLSocket) cc.getSocketFactory().createSocket()) {
                c.connect(new InetSocketAddress("localhost", port), 5000);
                c.setEnabledProtocols(new String[] {protocol});
                c.getOutputStream().write("GET /data.bin HTTP/1.0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                byte[] all = c.getInputStream().readAllBytes();
                assertEquals(protocol, c.getSession().getProtocol());
                String text = new String(all, 0, Math.min(all.length, 200), StandardCharsets.ISO_8859_1);
                int body = text.indexOf("\r\n\r\n") + 4;
                assertTrue(text.startsWith("HTTP/1.0 200 ok"), text);
                byte[] got = java.util.Arrays.copyOfRange(all, body, all.length);
                assertArrayEquals(file, got, "16 MiB from s_server");
            }
        } finally {
            p.destroy();
            p.waitFor(10, TimeUnit.SECONDS);
        }
    }

    static Stream<String> protocols() {
        return Stream.of("TLSv1.2", "TLSv1.3");
    }

    @Test
    void ipv6Loopback() throws Exception {
        SSLContext sc = Contexts.server(Contexts.TLSBRIDGE, "ec");
        SSLContext cc = Contexts.client(Contexts.TLSBRIDGE);
        InetAddress v6 = InetAddress.getByName("::1");
        try (SSLServerSocket ss = (SSLServerSocket) sc.getServerSocketFactory().createServerSocket(0, 50, v6)) {
            assertEquals(v6, ss.getInetAddress());
            CompletableFuture<Void> server = echoServer(ss);
            try (SSLSocket c = (SSLSocket) cc.getSocketFactory().createSocket(v6, ss.getLocalPort())) {
                assertEquals(v6, c.getInetAddress());
                assertEquals(v6, c.getLocalAddress());
                assertEquals(ss.getLocalPort(), c.getPort());
                byte[] msg = "over IPv6".getBytes(StandardCharsets.US_ASCII);
                assertArrayEquals(msg, roundTrip(c, msg));
                new DataOutputStream(c.getOutputStream()).writeInt(0);
            }
            server.get(30, TimeUnit.SECONDS);
        }
    }
}
