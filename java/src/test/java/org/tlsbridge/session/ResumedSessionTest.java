package org.tlsbridge.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.security.Principal;
import java.security.Provider;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSession;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.tlsbridge.TlsBridgeProvider;
import org.tlsbridge.test.Contexts;
import org.tlsbridge.test.EnginePair;

/**
 * A resumed session reports what the full handshake established (both
 * sides' chains, principals, suite, protocol), on every transport, as
 * SunJSSE reports it: Jetty's SecureRequestCustomizer answers 400 to a
 * session whose getLocalCertificates() is null.
 */
class ResumedSessionTest {
    enum Transport { ENGINE, SOCKET, LAYERED }

    /** One connection's view from both ends. */
    record Views(Map<String, Object> client, Map<String, Object> server, boolean clientResumed,
            boolean serverResumed) {
    }

    static Map<String, Object> describe(SSLSession s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("localCertificates", names(s.getLocalCertificates()));
        try {
            m.put("peerCertificates", names(s.getPeerCertificates()));
        } catch (SSLPeerUnverifiedException e) {
            m.put("peerCertificates", "unverified");
        }
        try {
            m.put("peerPrincipal", s.getPeerPrincipal().getName());
        } catch (SSLPeerUnverifiedException e) {
            m.put("peerPrincipal", "unverified");
        }
        Principal lp = s.getLocalPrincipal();
        m.put("localPrincipal", lp == null ? null : lp.getName());
        m.put("cipherSuite", s.getCipherSuite());
        m.put("protocol", s.getProtocol());
        m.put("peerHost", s.getPeerHost());
        m.put("valid", s.isValid());
        return m;
    }

    private static Object names(Certificate[] chain) {
        if (chain == null) {
            return null;
        }
        List<String> out = new ArrayList<>();
        for (Certificate c : chain) {
            out.add(((X509Certificate) c).getSubjectX500Principal().getName());
        }
        return out;
    }

    private static String[] suites(String protocol) {
        return new String[] {"TLSv1.3".equals(protocol) ? "TLS_AES_128_GCM_SHA256"
                : "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"};
    }

    private static void pin(SSLSocket s, String protocol) {
        s.setEnabledProtocols(new String[] {protocol});
        s.setEnabledCipherSuites(suites(protocol));
    }

    /** Two connections over fresh contexts of one provider: [full handshake, resumed]. */
    static Views[] twoConnections(Provider p, Transport t, String protocol, boolean clientAuth) throws Exception {
        SSLContext server = Contexts.server(p, "rsa");
        SSLContext client = clientAuth ? Contexts.clientWithCert(p) : Contexts.client(p);
        Views[] out = new Views[2];
        if (t == Transport.ENGINE) {
            for (int i = 0; i < 2; i++) {
                EnginePair e = new EnginePair(client, server, false, "localhost", 8443);
                for (javax.net.ssl.SSLEngine x : new javax.net.ssl.SSLEngine[] {e.client, e.server}) {
                    x.setEnabledProtocols(new String[] {protocol});
                    x.setEnabledCipherSuites(suites(protocol));
                }
                e.server.setNeedClientAuth(clientAuth);
                e.handshake();
                e.send(e.server, new byte[10]); // a TLS 1.3 ticket rides along with data
                e.send(e.client, new byte[10]);
                out[i] = views(e.client.getSession(), e.server.getSession());
            }
            return out;
        }
        InetAddress lo = InetAddress.getLoopbackAddress();
        try (ServerSocket ss = t == Transport.SOCKET ? server.getServerSocketFactory().createServerSocket(0, 50, lo)
                : new ServerSocket(0, 50, lo)) {
            if (ss instanceof SSLServerSocket) {
                ((SSLServerSocket) ss).setNeedClientAuth(clientAuth);
            }
            CompletableFuture<List<SSLSession>> served = CompletableFuture.supplyAsync(() -> {
                List<SSLSession> sessions = new ArrayList<>();
                for (int i = 0; i < 2; i++) {
                    try (Socket raw = ss.accept()) {
                        SSLSocket s = t == Transport.SOCKET ? (SSLSocket) raw
                                : (SSLSocket) server.getSocketFactory().createSocket(raw, null, raw.getPort(), false);
                        if (t == Transport.LAYERED) {
                            s.setUseClientMode(false);
                            s.setNeedClientAuth(clientAuth);
                        }
                        pin(s, protocol);
                        InputStream in = s.getInputStream();
                        OutputStream o = s.getOutputStream();
                        assertEquals('x', in.read());
                        sessions.add(s.getSession());
                        o.write('y');
                        o.flush();
                        assertEquals(-1, in.read());
                        s.close();
                    } catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                }
                return sessions;
            }, r -> {
                Thread th = new Thread(r, "resumed-session-server");
                th.setDaemon(true);
                th.start();
            });
            SSLSession[] clientSessions = new SSLSession[2];
            for (int i = 0; i < 2; i++) {
                SSLSocketFactory f = client.getSocketFactory();
                SSLSocket c;
                Socket raw = null;
                if (t == Transport.SOCKET) {
                    c = (SSLSocket) f.createSocket("localhost", ss.getLocalPort());
                } else {
                    raw = new Socket(lo, ss.getLocalPort());
                    c = (SSLSocket) f.createSocket(raw, "localhost", ss.getLocalPort(), true);
                }
                try (SSLSocket cc = c) {
                    pin(cc, protocol);
                    cc.getOutputStream().write('x');
                    cc.getOutputStream().flush();
                    assertEquals('y', cc.getInputStream().read());
                    clientSessions[i] = cc.getSession();
                }
            }
            List<SSLSession> s = served.get(60, TimeUnit.SECONDS);
            for (int i = 0; i < 2; i++) {
                out[i] = views(clientSessions[i], s.get(i));
            }
        }
        return out;
    }

    private static Views views(SSLSession client, SSLSession server) {
        return new Views(describe(client), describe(server), TlsBridgeProvider.isResumed(client),
                TlsBridgeProvider.isResumed(server));
    }

    @ParameterizedTest(name = "{0} {1} clientAuth={2}")
    @CsvSource({
        "ENGINE, TLSv1.2, false", "ENGINE, TLSv1.2, true", "ENGINE, TLSv1.3, false", "ENGINE, TLSv1.3, true",
        "SOCKET, TLSv1.2, false", "SOCKET, TLSv1.2, true", "SOCKET, TLSv1.3, false", "SOCKET, TLSv1.3, true",
        "LAYERED, TLSv1.2, false", "LAYERED, TLSv1.2, true", "LAYERED, TLSv1.3, false", "LAYERED, TLSv1.3, true"})
    void resumedSessionReportsWhatTheFullHandshakeEstablished(Transport t, String protocol, boolean clientAuth)
            throws Exception {
        Views[] tb = twoConnections(Contexts.TLSBRIDGE, t, protocol, clientAuth);
        assertFalse(tb[0].clientResumed() || tb[0].serverResumed(), "first connection: full handshake");
        assertTrue(tb[1].clientResumed(), "client resumed");
        assertTrue(tb[1].serverResumed(), "server resumed");
        assertEquals(tb[0].server(), tb[1].server(), "server: resumed session = full handshake's");
        assertEquals(tb[0].client(), tb[1].client(), "client: resumed session = full handshake's");
        assertEquals(2, ((List<?>) tb[1].server().get("localCertificates")).size(), "server chain: leaf + CA");
        if (clientAuth) {
            assertEquals(2, ((List<?>) tb[1].server().get("peerCertificates")).size(), "client chain: leaf + CA");
        }
        Views[] sun = twoConnections(Contexts.sun(), t, protocol, clientAuth);
        assertEquals(sun[0].server(), tb[0].server(), "server's first session: tlsbridge vs SunJSSE");
        assertEquals(sun[0].client(), tb[0].client(), "client's first session: tlsbridge vs SunJSSE");
        if (t == Transport.ENGINE) {
            // SunJSSE's resumed server engine session says "" where its full one said null (no host given)
            assertEquals("", sun[1].server().put("peerHost", sun[0].server().get("peerHost")));
        }
        assertEquals(sun[1].server(), tb[1].server(), "server's resumed session: tlsbridge vs SunJSSE");
        assertEquals(sun[1].client(), tb[1].client(), "client's resumed session: tlsbridge vs SunJSSE");
    }
}
