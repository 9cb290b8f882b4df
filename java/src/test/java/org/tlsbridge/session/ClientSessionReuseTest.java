package org.tlsbridge.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
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
        for (ClientTransport t : ClientTransport.values()) {
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

        Server(ClientTransport t) throws Exception {
            if (t == ClientTransport.ENGINE) {
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
    static Seen connect(SSLContext client, ClientTransport t, Server server, Ask ask) throws Exception {
        if (t == ClientTransport.ENGINE) {
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
        SSLSession cs;
        try (SSLSocket cc = t.socket(client, server.port())) {
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

    /**
     * One client context and one server, connected again and again; each connection a full or a resumed one. ask:
     * what the test asks for unless it says otherwise (its protocol with that protocol's AES-128-GCM suite).
     */
    record Client(SSLContext ctx, ClientTransport t, Server server, Ask ask) {
        Seen connect(Ask a) throws Exception {
            return ClientSessionReuseTest.connect(ctx, t, server, a);
        }

        Seen full(Ask a, String what) throws Exception {
            Seen s = connect(a);
            assertFalse(s.resumed(), what + ": a full handshake");
            return s;
        }

        Seen resumed(Ask a, String what) throws Exception {
            Seen s = connect(a);
            assertTrue(s.resumed(), what + ": resumed");
            return s;
        }

        Seen full(String what) throws Exception {
            return full(ask, what);
        }

        Seen resumed(String what) throws Exception {
            return resumed(ask, what);
        }
    }

    interface Steps {
        void run(Client c) throws Exception;
    }

    /** The steps of a fresh client context of provider against a fresh server on t, asking for protocol. */
    private static void run(ClientTransport t, String provider, String protocol, Steps steps) throws Exception {
        try (Server server = new Server(t)) {
            steps.run(new Client(Contexts.client(provider(provider)), t, server,
                    protocol == null ? null : Ask.of(protocol, suite(protocol))));
        }
    }

    /** The same for steps that say what each connection asks for. */
    private static void run(ClientTransport t, String provider, Steps steps) throws Exception {
        run(t, provider, null, steps);
    }

    @ParameterizedTest(name = "{0} {1} client {2}")
    @MethodSource("everyClientAndVersion")
    void invalidatedSessionIsNeverOffered(ClientTransport t, String provider, String protocol) throws Exception {
        run(t, provider, protocol, c -> {
            c.full("first");
            Seen second = c.resumed("second");
            second.clientSession().invalidate();
            assertFalse(second.clientSession().isValid());
            c.full("after invalidate()");
            c.resumed("the new session");
        });
    }

    @ParameterizedTest(name = "{0} {1} client {2}")
    @MethodSource("everyClientAndVersion")
    void firstSessionInvalidatedIsNeverOfferedEither(ClientTransport t, String provider, String protocol)
            throws Exception {
        run(t, provider, protocol, c -> {
            c.full("first").clientSession().invalidate();
            c.full("after invalidate()");
        });
    }

    @ParameterizedTest(name = "{0} {1} client")
    @MethodSource("everyClient")
    void sessionOfASuiteNoLongerEnabledIsNotOffered(ClientTransport t, String provider) throws Exception {
        run(t, provider, c -> {
            c.full(Ask.of("TLSv1.2", AES128_12), "TLS 1.2 first");
            Seen s = c.full(Ask.of("TLSv1.2", AES256_12), "TLS 1.2 with only another suite");
            assertEquals(AES256_12, s.suite());
            c.resumed(Ask.of("TLSv1.2", AES256_12), "TLS 1.2 the new suite's session");

            c.full(Ask.of("TLSv1.3", AES128_13), "TLS 1.3 first");
            assertEquals(AES256_13, c.full(Ask.of("TLSv1.3", AES256_13), "TLS 1.3 with only a suite of another hash")
                    .suite());
        });
    }

    @ParameterizedTest(name = "{0} {1} client")
    @MethodSource("everyClient")
    void sessionOfAVersionNoLongerEnabledIsNotOffered(ClientTransport t, String provider) throws Exception {
        run(t, provider, c -> {
            c.full(Ask.of("TLSv1.3", AES128_13), "TLS 1.3 first");
            assertEquals("TLSv1.2", c.full(Ask.of("TLSv1.2", AES128_12), "then TLS 1.2 only").protocol());
            assertEquals("TLSv1.3", c.full(Ask.of("TLSv1.3", AES128_13), "then TLS 1.3 only").protocol());
        });
    }

    @ParameterizedTest(name = "{0} {1} client {2}")
    @MethodSource("everyClientAndVersion")
    void sessionForAnotherServerNameIsNotOffered(ClientTransport t, String provider, String protocol)
            throws Exception {
        run(t, provider, protocol, c -> {
            c.full(c.ask().sni("a.example"), "SNI a.example");
            c.resumed(c.ask().sni("a.example"), "SNI a.example again");
            // RFC 8446 4.6.1: a client SHOULD resume only with the SNI of the original session.
            // SunJSSE (JDK 17) offers it anyway and the server resumes; tlsbridge does not offer it.
            if ("SunJSSE".equals(provider)) {
                c.connect(c.ask().sni("b.example"));
            } else {
                c.full(c.ask().sni("b.example"), "SNI b.example");
            }
        });
    }

    @ParameterizedTest(name = "{0} {1} client {2}")
    @MethodSource("everyClientAndVersion")
    void sessionMadeWithoutEndpointIdentificationIsNotOfferedWhenItIsAsked(ClientTransport t, String provider,
            String protocol) throws Exception {
        run(t, provider, protocol, c -> {
            c.full("no identification");
            c.full(c.ask().identification("HTTPS"), "HTTPS identification");
            c.resumed(c.ask().identification("HTTPS"), "HTTPS identification again");
        });
    }
}
