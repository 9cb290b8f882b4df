package org.tlsbridge.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.security.Provider;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSession;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.tlsbridge.TlsBridgeProvider;
import org.tlsbridge.test.Contexts;
import org.tlsbridge.test.EnginePair;

/**
 * Which cached session a client offers, tlsbridge and SunJSSE doing the same
 * steps against a tlsbridge server (whose session says whether it resumed):
 * an invalidated session never; a session only while its version and suite
 * are enabled and the same server names and endpoint identification are
 * asked (SunJSSE offers a session to another server name; tlsbridge does
 * not); otherwise a full handshake with the new parameters, never a failed
 * one. On the engine, the native socket and the layered socket.
 */
@Timeout(120)
class ClientSessionReuseTest {
    enum Transport { ENGINE, SOCKET, LAYERED }

    /** Engines meet in memory: the port is only the client cache's key. */
    private static final int ENGINE_PORT = 8443;
    private static final String AES128_12 = "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256";
    private static final String AES256_12 = "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384";
    private static final String AES128_13 = "TLS_AES_128_GCM_SHA256";
    private static final String AES256_13 = "TLS_AES_256_GCM_SHA384";

    /** What the client asks for on one connection. */
    record Ask(String protocol, String suite, String sni, String identification) {
        static Ask of(String protocol, String suite) {
            return new Ask(protocol, suite, null, null);
        }

        Ask sni(String name) {
            return new Ask(protocol, suite, name, identification);
        }

        Ask identification(String alg) {
            return new Ask(protocol, suite, sni, alg);
        }

        SSLParameters into(SSLParameters p) {
            p.setProtocols(new String[] {protocol});
            p.setCipherSuites(new String[] {suite});
            if (sni != null) {
                p.setServerNames(List.of(new SNIHostName(sni)));
            }
            p.setEndpointIdentificationAlgorithm(identification);
            return p;
        }
    }

    /** One connection as both ends saw it. */
    record Seen(boolean resumed, String suite, String protocol, SSLSession clientSession) {
    }

    static List<Arguments> everyClient() {
        List<Arguments> out = new java.util.ArrayList<>();
        for (Transport t : Transport.values()) {
            for (String provider : new String[] {"TLSBridge", "SunJSSE"}) {
                out.add(Arguments.of(t, provider));
            }
        }
        return out;
    }

    static List<Arguments> everyClientAndVersion() {
        List<Arguments> out = new java.util.ArrayList<>();
        for (Arguments a : everyClient()) {
            for (String v : new String[] {"TLSv1.2", "TLSv1.3"}) {
                out.add(Arguments.of(a.get()[0], a.get()[1], v));
            }
        }
        return out;
    }

    private static Provider provider(String name) {
        return "SunJSSE".equals(name) ? Contexts.sun() : Contexts.TLSBRIDGE;
    }

    private static String suite(String protocol) {
        return "TLSv1.3".equals(protocol) ? AES128_13 : AES128_12;
    }

    /** A tlsbridge server: engines made on demand, or a native server socket answering 'x' with 'y'. */
    static final class Server implements AutoCloseable {
        final SSLContext ctx = Contexts.server(Contexts.TLSBRIDGE, "rsa");
        private final SSLServerSocket ss;
        private final BlockingQueue<Object> seen = new LinkedBlockingQueue<>();

        Server(Transport t) throws Exception {
            if (t == Transport.ENGINE) {
                ss = null;
                return;
            }
            ss = (SSLServerSocket) ctx.getServerSocketFactory().createServerSocket(0, 50,
                    InetAddress.getLoopbackAddress());
            Thread th = new Thread(this::serve, "client-session-server");
            th.setDaemon(true);
            th.start();
        }

        int port() {
            return ss == null ? ENGINE_PORT : ss.getLocalPort();
        }

        private void serve() {
            while (!ss.isClosed()) {
                try (SSLSocket s = (SSLSocket) ss.accept()) {
                    s.setSoTimeout(20_000);
                    InputStream in = s.getInputStream();
                    try {
                        int b = in.read();
                        seen.add(b == 'x' ? (Object) TlsBridgeProvider.isResumed(s.getSession())
                                : new AssertionError("server read " + b));
                        s.getOutputStream().write('y');
                        s.getOutputStream().flush();
                        in.read();
                    } catch (Exception e) {
                        seen.add(e);
                    }
                } catch (Exception e) {
                    if (!ss.isClosed()) {
                        seen.add(e);
                    }
                }
            }
        }

        /** Whether the server resumed the connection it served last; its failure, thrown. */
        boolean resumed() throws Exception {
            Object o = seen.poll(30, TimeUnit.SECONDS);
            if (o instanceof Exception) {
                throw new AssertionError("server failed: " + o, (Exception) o);
            }
            if (o instanceof Error) {
                throw (Error) o;
            }
            if (o == null) {
                throw new AssertionError("the server saw no connection");
            }
            return (Boolean) o;
        }

        @Override
        public void close() throws Exception {
            if (ss != null) {
                ss.close();
            }
        }
    }

    /** One connection of client to server, the client configured by ask; the handshake must succeed. */
    static Seen connect(SSLContext client, Transport t, Server server, Ask ask) throws Exception {
        if (t == Transport.ENGINE) {
            SSLEngine c = client.createSSLEngine("localhost", ENGINE_PORT);
            c.setUseClientMode(true);
            c.setSSLParameters(ask.into(c.getSSLParameters()));
            SSLEngine s = server.ctx.createSSLEngine();
            s.setUseClientMode(false);
            EnginePair p = new EnginePair(c, s, false);
            p.handshake();
            p.send(p.server, new byte[10]); // TLS 1.3 tickets ride along
            p.send(p.client, new byte[10]);
            SSLSession cs = c.getSession();
            return new Seen(TlsBridgeProvider.isResumed(s.getSession()), cs.getCipherSuite(), cs.getProtocol(), cs);
        }
        int port = server.port();
        SSLSocket c = t == Transport.SOCKET
                ? (SSLSocket) client.getSocketFactory().createSocket("localhost", port)
                : (SSLSocket) client.getSocketFactory().createSocket(
                        new Socket(InetAddress.getLoopbackAddress(), port), "localhost", port, true);
        SSLSession cs;
        try (SSLSocket cc = c) {
            cc.setSoTimeout(20_000);
            cc.setSSLParameters(ask.into(cc.getSSLParameters()));
            OutputStream o = cc.getOutputStream();
            o.write('x');
            o.flush();
            assertEquals('y', cc.getInputStream().read()); // after the TLS 1.3 tickets
            cs = cc.getSession();
        }
        return new Seen(server.resumed(), cs.getCipherSuite(), cs.getProtocol(), cs);
    }

    private static void full(Seen s, String what) {
        assertFalse(s.resumed(), what + ": a full handshake");
    }

    private static void resumed(Seen s, String what) {
        assertTrue(s.resumed(), what + ": resumed");
    }

    @ParameterizedTest(name = "{0} {1} client {2}")
    @MethodSource("everyClientAndVersion")
    void invalidatedSessionIsNeverOffered(Transport t, String provider, String protocol) throws Exception {
        SSLContext client = Contexts.client(provider(provider));
        Ask ask = Ask.of(protocol, suite(protocol));
        try (Server server = new Server(t)) {
            full(connect(client, t, server, ask), "first");
            Seen second = connect(client, t, server, ask);
            resumed(second, "second");
            second.clientSession().invalidate();
            assertFalse(second.clientSession().isValid());
            full(connect(client, t, server, ask), "after invalidate()");
            resumed(connect(client, t, server, ask), "the new session");
        }
    }

    @ParameterizedTest(name = "{0} {1} client {2}")
    @MethodSource("everyClientAndVersion")
    void firstSessionInvalidatedIsNeverOfferedEither(Transport t, String provider, String protocol)
            throws Exception {
        SSLContext client = Contexts.client(provider(provider));
        Ask ask = Ask.of(protocol, suite(protocol));
        try (Server server = new Server(t)) {
            Seen first = connect(client, t, server, ask);
            full(first, "first");
            first.clientSession().invalidate();
            full(connect(client, t, server, ask), "after invalidate()");
        }
    }

    @ParameterizedTest(name = "{0} {1} client")
    @MethodSource("everyClient")
    void sessionOfASuiteNoLongerEnabledIsNotOffered(Transport t, String provider) throws Exception {
        SSLContext client = Contexts.client(provider(provider));
        try (Server server = new Server(t)) {
            full(connect(client, t, server, Ask.of("TLSv1.2", AES128_12)), "TLS 1.2 first");
            Seen s = connect(client, t, server, Ask.of("TLSv1.2", AES256_12));
            full(s, "TLS 1.2 with only another suite");
            assertEquals(AES256_12, s.suite());
            resumed(connect(client, t, server, Ask.of("TLSv1.2", AES256_12)), "TLS 1.2 the new suite's session");

            full(connect(client, t, server, Ask.of("TLSv1.3", AES128_13)), "TLS 1.3 first");
            s = connect(client, t, server, Ask.of("TLSv1.3", AES256_13));
            full(s, "TLS 1.3 with only a suite of another hash");
            assertEquals(AES256_13, s.suite());
        }
    }

    @ParameterizedTest(name = "{0} {1} client")
    @MethodSource("everyClient")
    void sessionOfAVersionNoLongerEnabledIsNotOffered(Transport t, String provider) throws Exception {
        SSLContext client = Contexts.client(provider(provider));
        try (Server server = new Server(t)) {
            full(connect(client, t, server, Ask.of("TLSv1.3", AES128_13)), "TLS 1.3 first");
            Seen s = connect(client, t, server, Ask.of("TLSv1.2", AES128_12));
            full(s, "then TLS 1.2 only");
            assertEquals("TLSv1.2", s.protocol());
            s = connect(client, t, server, Ask.of("TLSv1.3", AES128_13));
            full(s, "then TLS 1.3 only");
            assertEquals("TLSv1.3", s.protocol());
        }
    }

    @ParameterizedTest(name = "{0} {1} client {2}")
    @MethodSource("everyClientAndVersion")
    void sessionForAnotherServerNameIsNotOffered(Transport t, String provider, String protocol) throws Exception {
        SSLContext client = Contexts.client(provider(provider));
        Ask ask = Ask.of(protocol, suite(protocol));
        try (Server server = new Server(t)) {
            full(connect(client, t, server, ask.sni("a.example")), "SNI a.example");
            resumed(connect(client, t, server, ask.sni("a.example")), "SNI a.example again");
            Seen other = connect(client, t, server, ask.sni("b.example"));
            // RFC 8446 4.6.1: a client SHOULD resume only with the SNI of the original session.
            // SunJSSE (JDK 17) offers it anyway and the server resumes; tlsbridge does not offer it.
            if (!"SunJSSE".equals(provider)) {
                full(other, "SNI b.example");
            }
        }
    }

    @ParameterizedTest(name = "{0} {1} client {2}")
    @MethodSource("everyClientAndVersion")
    void sessionMadeWithoutEndpointIdentificationIsNotOfferedWhenItIsAsked(Transport t, String provider,
            String protocol) throws Exception {
        SSLContext client = Contexts.client(provider(provider));
        Ask ask = Ask.of(protocol, suite(protocol));
        try (Server server = new Server(t)) {
            full(connect(client, t, server, ask), "no identification");
            full(connect(client, t, server, ask.identification("HTTPS")), "HTTPS identification");
            resumed(connect(client, t, server, ask.identification("HTTPS")), "HTTPS identification again");
        }
    }
}
