package org.tlsbridge.jetty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ServiceLoader;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import org.eclipse.jetty.alpn.server.ALPNServerConnectionFactory;
import org.eclipse.jetty.http2.server.HTTP2ServerConnectionFactory;
import org.eclipse.jetty.io.ssl.ALPNProcessor;
import org.eclipse.jetty.io.ssl.SslConnection;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.SecureRequestCustomizer;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.tlsbridge.test.Contexts;

/**
 * Embedded Jetty with its stock ALPN connector over a tlsbridge SSLContext,
 * SunJSSE clients: the processor must come from the jar's ServiceLoader
 * entry (the tests never name it to Jetty), negotiate h2 and http/1.1 as
 * Jetty's server order says, fall back to http/1.1 without ALPN, and refuse
 * a client with no protocol in common. tests/jetty/run.sh does the same
 * against Jetty 12.0 and 12.1 with curl and openssl.
 */
class JettyAlpnTest {
    private static Server server;
    private static int port;

    @BeforeAll
    static void start() throws Exception {
        SslContextFactory.Server tls = new SslContextFactory.Server();
        tls.setSslContext(Contexts.server(Contexts.TLSBRIDGE, "rsa"));
        HttpConfiguration config = new HttpConfiguration();
        config.addCustomizer(new SecureRequestCustomizer());
        HttpConnectionFactory http11 = new HttpConnectionFactory(config);
        ALPNServerConnectionFactory alpn = new ALPNServerConnectionFactory();
        alpn.setDefaultProtocol(http11.getProtocol());
        server = new Server();
        ServerConnector c = new ServerConnector(server, new SslConnectionFactory(tls, alpn.getProtocol()), alpn,
                new HTTP2ServerConnectionFactory(config), http11);
        c.setHost("127.0.0.1");
        server.addConnector(c);
        server.setHandler(new Handler.Abstract() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) {
                SSLEngine engine = ((SslConnection.SslEndPoint) request.getConnectionMetaData().getConnection()
                        .getEndPoint()).getSslConnection().getSSLEngine();
                String alpn = engine.getApplicationProtocol();
                String body = request.getConnectionMetaData().getHttpVersion().asString() + " "
                        + (alpn == null || alpn.isEmpty() ? "none" : alpn) + " " + engine.getClass().getSimpleName();
                response.write(true, ByteBuffer.wrap(body.getBytes(StandardCharsets.UTF_8)), callback);
                return true;
            }
        });
        server.start();
        port = c.getLocalPort();
    }

    @AfterAll
    static void stop() throws Exception {
        if (server != null) {
            server.stop();
        }
    }

    @Test
    void serviceLoaderOffersTheProcessorForTlsBridgeEnginesOnly() throws Exception {
        TlsBridgeServerALPNProcessor found = null;
        for (ALPNProcessor.Server p : ServiceLoader.load(ALPNProcessor.Server.class)) {
            if (p instanceof TlsBridgeServerALPNProcessor) {
                found = (TlsBridgeServerALPNProcessor) p;
            }
        }
        assertTrue(found != null, "META-INF/services lists no TlsBridgeServerALPNProcessor");
        assertTrue(found.appliesTo(Contexts.server(Contexts.TLSBRIDGE, "rsa").createSSLEngine()));
        assertFalse(found.appliesTo(Contexts.server(Contexts.sun(), "rsa").createSSLEngine()),
                "SunJSSE's engines are Jetty's own processor's business");
    }

    @Test
    void h2ByAlpn() throws Exception {
        HttpResponse<String> r = get(HttpClient.Version.HTTP_2);
        assertEquals(HttpClient.Version.HTTP_2, r.version());
        assertEquals("HTTP/2.0 h2 TlsBridgeEngine", r.body());
    }

    @Test
    void http11ByAlpn() throws Exception {
        String reply = rawGet("http/1.1");
        assertTrue(reply.startsWith("HTTP/1.1 200"), reply);
        assertTrue(reply.endsWith("HTTP/1.1 http/1.1 TlsBridgeEngine"), reply);
    }

    @Test
    void clientWithoutAlpnGetsTheDefaultProtocol() throws Exception {
        String reply = rawGet();
        assertTrue(reply.startsWith("HTTP/1.1 200"), reply);
        assertTrue(reply.endsWith("HTTP/1.1 none TlsBridgeEngine"), reply);
    }

    @Test
    void theServersOrderWins() throws Exception {
        try (SSLSocket s = client("http/1.1", "h2")) {
            s.startHandshake();
            assertEquals("h2", s.getApplicationProtocol());
        }
    }

    @Test
    void noProtocolInCommonIsAnAlert() throws Exception {
        try (SSLSocket s = client("spdy/1", "imap")) {
            SSLHandshakeException e = assertThrows(SSLHandshakeException.class, s::startHandshake);
            assertTrue(String.valueOf(e.getMessage()).contains("no_application_protocol"), String.valueOf(e));
        }
    }

    /** One HTTP/1.1 GET over a SunJSSE socket offering these protocols (none: no ALPN extension). */
    private static String rawGet(String... alpn) throws Exception {
        try (SSLSocket s = client(alpn)) {
            OutputStream out = s.getOutputStream();
            out.write("GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            try (InputStream in = s.getInputStream()) {
                return new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
            }
        }
    }

    private static SSLSocket client(String... alpn) throws Exception {
        SSLSocket s = (SSLSocket) Contexts.client(Contexts.sun()).getSocketFactory().createSocket("127.0.0.1", port);
        s.setSoTimeout(30_000);
        if (alpn.length > 0) {
            SSLParameters p = s.getSSLParameters();
            p.setApplicationProtocols(alpn);
            s.setSSLParameters(p);
        }
        return s;
    }

    private static HttpResponse<String> get(HttpClient.Version version) throws Exception {
        HttpClient client = HttpClient.newBuilder().version(version).sslContext(Contexts.client(Contexts.sun()))
                .connectTimeout(Duration.ofSeconds(30)).build();
        HttpRequest req = HttpRequest.newBuilder(URI.create("https://localhost:" + port + "/"))
                .timeout(Duration.ofSeconds(30)).build();
        return client.send(req, HttpResponse.BodyHandlers.ofString());
    }
}
