package org.tlsbridge.socket;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.ExtendedSSLSession;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.Test;
import org.tlsbridge.TlsBridgeProvider;
import org.tlsbridge.test.Contexts;

/** ALPN, SNI and resumption on the native-descriptor sockets. */
class SocketFeaturesTest {
    /** Serves n connections: reads one byte, answers with the negotiated ALPN and SNI. */
    private static CompletableFuture<Void> serve(SSLServerSocket ss, int n) {
        return CompletableFuture.runAsync(() -> {
            for (int i = 0; i < n; i++) {
                try (SSLSocket s = (SSLSocket) ss.accept()) {
                    s.setHandshakeApplicationProtocolSelector((sock, offered) -> offered.contains("b") ? "b" : null);
                    InputStream in = s.getInputStream();
                    in.read();
                    List<?> names = ((ExtendedSSLSession) s.getSession()).getRequestedServerNames();
                    String reply = s.getApplicationProtocol() + "|" + (names.isEmpty() ? "-"
                            : ((SNIHostName) names.get(0)).getAsciiName()) + "\n";
                    OutputStream out = s.getOutputStream();
                    out.write(reply.getBytes());
                    out.flush();
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            }
        }, r -> {
            Thread t = new Thread(r, "socket-features-server");
            t.setDaemon(true);
            t.start();
        });
    }

    private static String exchange(SSLSocket c) throws Exception {
        c.getOutputStream().write('x');
        c.getOutputStream().flush();
        byte[] b = new byte[100];
        int n = c.getInputStream().read(b);
        return new String(b, 0, n).trim();
    }

    @Test
    void alpnSniAndResumption() throws Exception {
        SSLContext server = Contexts.server(Contexts.TLSBRIDGE, "rsa", "other");
        SSLContext client = Contexts.client(Contexts.TLSBRIDGE);
        try (SSLServerSocket ss = (SSLServerSocket) server.getServerSocketFactory()
                .createServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            CompletableFuture<Void> done = serve(ss, 3);
            boolean[] resumed = new boolean[3];
            for (int i = 0; i < 3; i++) {
                try (SSLSocket c = (SSLSocket) client.getSocketFactory().createSocket(
                        InetAddress.getLoopbackAddress(), ss.getLocalPort())) {
                    SSLParameters p = c.getSSLParameters();
                    p.setApplicationProtocols(new String[] {"a", "b"});
                    p.setServerNames(List.of(new SNIHostName("other.example")));
                    c.setSSLParameters(p);
                    c.setEnabledProtocols(new String[] {i == 2 ? "TLSv1.3" : "TLSv1.2"});
                    assertEquals("b|other.example", exchange(c), "connection " + i);
                    assertEquals("b", c.getApplicationProtocol());
                    resumed[i] = TlsBridgeProvider.isResumed(c.getSession());
                }
            }
            done.get(30, TimeUnit.SECONDS);
            assertFalse(resumed[0], "first connection: full handshake");
            assertTrue(resumed[1], "second connection to the same host:port resumes");
            assertFalse(resumed[2], "a TLS 1.3 connection cannot resume a TLS 1.2 session");
        }
    }
}
