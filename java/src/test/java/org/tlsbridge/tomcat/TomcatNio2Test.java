package org.tlsbridge.tomcat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.apache.catalina.connector.Connector;
import org.apache.tomcat.util.net.SSLHostConfig;
import org.apache.tomcat.util.net.SSLHostConfigCertificate.Type;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.tlsbridge.test.Processes;

/**
 * TlsBridgeImplementation under Tomcat's NIO2 connector, whose channel wraps
 * a pending message only before its next write. A TLS 1.3 server engine
 * reports FINISHED with its NewSessionTickets still queued (NEED_WRAP): under
 * NIO2 they must still reach the client, ahead of the response; a TLS 1.2
 * server's last flight must come out of the handshake itself, or the client,
 * waiting for that flight, and Tomcat, waiting for the request, would both
 * wait until curl gives up.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TomcatNio2Test {
    @AutoClose
    private EmbeddedTomcat tc;
    private TomcatPki pki;
    private int port;

    @BeforeAll
    void start() throws Exception {
        pki = TomcatPki.get();
        tc = new EmbeddedTomcat(null);
        SSLHostConfig h = EmbeddedTomcat.host("_default_");
        EmbeddedTomcat.keystore(h, Type.RSA, pki.path("rsa.p12"), "PKCS12");
        h.setProtocols("TLSv1.2+TLSv1.3");
        Connector c = tc.https("org.apache.coyote.http11.Http11Nio2Protocol", EmbeddedTomcat.IMPL, h);
        tc.start();
        port = c.getLocalPort();
    }

    @ParameterizedTest(name = "TLS {0}")
    @ValueSource(strings = {"1.2", "1.3"})
    void servesNewConnections(String version) throws Exception {
        for (int i = 0; i < 3; i++) {
            Processes.Run r = Clients.curl(pki, "localhost", port, "/info", "--http1.1", "--max-time", "10",
                    "--tlsv" + version, "--tls-max", version);
            assertEquals(0, r.exit, r.toString());
            assertTrue(r.out.contains("SSL connection using TLSv" + version), r.toString());
            assertTrue(r.out.contains("tls_protocol=TLSv" + version), r.out);
            if (version.equals("1.3")) {
                assertTrue(r.out.contains("Newsession Ticket"), "the tickets reach the client: " + r);
            }
        }
        List<String> problems = tc.problems();
        assertTrue(problems.isEmpty(), "Tomcat logged: " + String.join("\n", problems));
    }
}
