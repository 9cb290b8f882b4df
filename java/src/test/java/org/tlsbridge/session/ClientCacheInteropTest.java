package org.tlsbridge.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSession;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.tlsbridge.TlsBridgeProvider;
import org.tlsbridge.features.OpensslPeers;
import org.tlsbridge.test.Contexts;
import org.tlsbridge.test.EngineChannel;
import org.tlsbridge.test.Processes;
import org.tlsbridge.test.TestPki;

/**
 * The client session cache against servers that refuse a bad offer: OpenSSL
 * 3.5's s_server and nginx (Debian's nginx-light, installed here when
 * missing, as scripts/lib/common.sh's need_pkgs does). A client that changes
 * its suites or version, or invalidates its session, reconnects with a full
 * handshake and no alert (an OpenSSL server aborts with illegal_parameter,
 * "required cipher missing", when offered a TLS 1.2 session whose suite the
 * ClientHello does not list). On the engine and both socket kinds.
 */
@Timeout(300)
class ClientCacheInteropTest {
    private static final TestPki PKI = TestPki.get();
    private static final String AES128_12 = "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256";
    private static final String AES256_12 = "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384";
    private static final String AES128_13 = "TLS_AES_128_GCM_SHA256";
    private static final String AES256_13 = "TLS_AES_256_GCM_SHA384";
    private static final byte[] GET = "GET / HTTP/1.0\r\nHost: localhost\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

    private static Processes.Child sServer;
    private static int sServerPort;
    private static Path nginxDir;
    private static Process nginx;
    private static int nginxPort;

    @BeforeAll
    static void servers() throws Exception {
        sServerPort = Processes.freePort();
        // -www: one HTTP answer per connection, then close; its own session cache and tickets
        sServer = Processes.start(PKI.dir, OpensslPeers.openssl35(), "s_server", "-accept",
                "127.0.0.1:" + sServerPort, "-cert", "rsa.pem", "-key", "rsa.key", "-www");
        assertTrue(sServer.await("ACCEPT", 10_000), sServer.output());
        startNginx();
    }

    /** nginx-light, installed by need_pkgs when missing (CI runs as root on a fresh Debian). */
    private static void startNginx() throws Exception {
        Path root = Path.of(System.getProperty("user.dir"));
        while (root != null && !Files.exists(root.resolve("scripts/lib/common.sh"))) {
            root = root.getParent();
        }
        if (!Files.isExecutable(Path.of("/usr/sbin/nginx")) && root != null) {
            Processes.Run r = Processes.run(null, 600, List.of("bash", "-c",
                    "source \"$0/scripts/lib/common.sh\" && need_pkgs nginx-light", root.toString()));
            assertTrue(Files.isExecutable(Path.of("/usr/sbin/nginx")),
                    "nginx is MISSING and need_pkgs nginx-light did not install it: " + r);
        }
        nginxDir = Files.createTempDirectory("tlsbridge-nginx");
        nginxPort = Processes.freePort();
        String conf = "daemon off;\nworker_processes 1;\npid " + nginxDir.resolve("nginx.pid") + ";\n"
                + "error_log " + nginxDir.resolve("error.log") + " info;\n"
                + "events { worker_connections 64; }\n"
                + "http {\n  access_log off;\n"
                + "  client_body_temp_path " + nginxDir + "/body;\n  proxy_temp_path " + nginxDir + "/proxy;\n"
                + "  fastcgi_temp_path " + nginxDir + "/fastcgi;\n  uwsgi_temp_path " + nginxDir + "/uwsgi;\n"
                + "  scgi_temp_path " + nginxDir + "/scgi;\n"
                + "  server {\n    listen 127.0.0.1:" + nginxPort + " ssl;\n"
                + "    ssl_certificate " + PKI.file("rsa.pem") + ";\n"
                + "    ssl_certificate_key " + PKI.file("rsa.key") + ";\n"
                + "    ssl_protocols TLSv1.2 TLSv1.3;\n"
                + "    ssl_session_cache shared:tb:1m;\n    ssl_session_tickets on;\n"
                + "    location / { return 200 \"ok\\n\"; }\n  }\n}\n";
        Path cf = nginxDir.resolve("nginx.conf");
        Files.writeString(cf, conf);
        nginx = Processes.builder("/usr/sbin/nginx", "-c", cf.toString(), "-p", nginxDir.toString(), "-e",
                nginxDir.resolve("error.log").toString()).redirectErrorStream(true)
                .redirectOutput(nginxDir.resolve("out.log").toFile()).start();
        long end = System.currentTimeMillis() + 15_000;
        while (System.currentTimeMillis() < end) {
            try (Socket s = new Socket(InetAddress.getLoopbackAddress(), nginxPort)) {
                return;
            } catch (java.io.IOException e) {
                assertTrue(nginx.isAlive(), "nginx exited: " + Files.readString(nginxDir.resolve("out.log")));
                Thread.sleep(50);
            }
        }
        throw new AssertionError("nginx did not listen on " + nginxPort);
    }

    @AfterAll
    static void stop() throws Exception {
        if (sServer != null) {
            sServer.close();
        }
        if (nginx != null) {
            nginx.destroy();
            nginx.waitFor();
        }
    }

    /** One HTTP/1.0 request over a connection to port; the client's session. Any failure is thrown. */
    private static SSLSession get(SSLContext client, ClientTransport t, int port, String protocol, String suite)
            throws Exception {
        if (t == ClientTransport.ENGINE) {
            SSLEngine e = client.createSSLEngine("localhost", port);
            e.setUseClientMode(true);
            e.setSSLParameters(params(e.getSSLParameters(), protocol, suite));
            SocketChannel ch = SocketChannel.open(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            try (EngineChannel c = new EngineChannel(e, ch, true)) {
                c.handshake();
                c.write(GET);
                String body = new String(c.readAll(), StandardCharsets.ISO_8859_1);
                assertTrue(body.startsWith("HTTP/1."), body);
                return e.getSession();
            }
        }
        try (SSLSocket c = t.socket(client, port)) {
            c.setSoTimeout(20_000);
            c.setSSLParameters(params(c.getSSLParameters(), protocol, suite));
            c.getOutputStream().write(GET);
            c.getOutputStream().flush();
            InputStream in = c.getInputStream();
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            byte[] b = new byte[4096];
            for (int n; (n = in.read(b)) >= 0;) {
                body.write(b, 0, n);
            }
            String text = body.toString(StandardCharsets.ISO_8859_1);
            assertTrue(text.startsWith("HTTP/1."), text);
            return c.getSession();
        }
    }

    private static SSLParameters params(SSLParameters p, String protocol, String suite) {
        p.setProtocols(new String[] {protocol});
        p.setCipherSuites(new String[] {suite});
        return p;
    }

    /** The steps of one server: every connection must succeed; resumption only where it may. */
    private static void steps(ClientTransport t, int port, String server) throws Exception {
        SSLContext client = Contexts.client(Contexts.TLSBRIDGE);
        versionSteps(client, t, port, server, "TLSv1.2", AES128_12, AES256_12);
        // the TLS 1.2 session is not offered to TLS 1.3: its first connection is a full handshake
        versionSteps(client, t, port, server, "TLSv1.3", AES128_13, AES256_13);
        SSLSession s = get(client, t, port, "TLSv1.2", AES128_12);
        assertFalse(TlsBridgeProvider.isResumed(s), server + ": TLS 1.2 after TLS 1.3, a full handshake");
    }

    /**
     * One version's steps, starting with no session of that version: a full handshake, then the same suite
     * resumes; another suite (on TLS 1.3 one of another hash) makes a full handshake that negotiates it; once
     * that session is invalidated, a full handshake again.
     */
    private static void versionSteps(SSLContext client, ClientTransport t, int port, String server, String protocol,
            String suite, String otherSuite) throws Exception {
        String at = server + ", " + protocol + ": ";
        SSLSession s = get(client, t, port, protocol, suite);
        assertFalse(TlsBridgeProvider.isResumed(s), at + "first connection, a full handshake");
        s = get(client, t, port, protocol, suite);
        assertTrue(TlsBridgeProvider.isResumed(s), at + "the same suite resumes");
        s = get(client, t, port, protocol, otherSuite);
        assertFalse(TlsBridgeProvider.isResumed(s), at + "another suite, a full handshake");
        assertEquals(otherSuite, s.getCipherSuite());
        s.invalidate();
        s = get(client, t, port, protocol, otherSuite);
        assertFalse(TlsBridgeProvider.isResumed(s), at + "after invalidate(), a full handshake");
    }

    @ParameterizedTest
    @EnumSource(ClientTransport.class)
    void opensslServer(ClientTransport t) throws Exception {
        steps(t, sServerPort, "openssl s_server");
    }

    @ParameterizedTest
    @EnumSource(ClientTransport.class)
    void nginxServer(ClientTransport t) throws Exception {
        steps(t, nginxPort, "nginx");
    }
}
