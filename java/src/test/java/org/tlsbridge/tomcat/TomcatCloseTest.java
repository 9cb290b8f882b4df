package org.tlsbridge.tomcat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import org.apache.catalina.connector.Connector;
import org.apache.tomcat.util.net.SSLHostConfig;
import org.apache.tomcat.util.net.SSLHostConfigCertificate.Type;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.tlsbridge.internal.Diagnostics;
import org.tlsbridge.test.Contexts;
import org.tlsbridge.test.LiveCounts;

/**
 * Tomcat closes a connection with closeOutbound and one wrap of its
 * close_notify, never with closeInbound, and then closes the socket.
 * Through TlsBridgeImplementation the server's SSL is freed right there, on
 * Tomcat's thread: after connections that Tomcat closed (the client asked
 * for Connection: close, TLS 1.3 and 1.2) the live native connection count
 * is back where it was with no garbage collection in between. Before, each
 * such SSL waited for a GC and the Cleaner thread. The provider's engines
 * keep the JSSE half-close (ContractTest): this is the Tomcat adapter's.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TomcatCloseTest {
    private static final int CONNECTIONS = 20;

    @AutoClose
    private EmbeddedTomcat tc;
    private int port;
    private final SSLContext client = Contexts.client(Contexts.sun());

    @BeforeAll
    void start() throws Exception {
        TomcatPki pki = TomcatPki.get();
        tc = new EmbeddedTomcat(null);
        SSLHostConfig h = EmbeddedTomcat.host("_default_");
        EmbeddedTomcat.pem(h, Type.RSA, pki.path("rsa.key"), pki.path("rsa.pem"), null, null);
        Connector c = tc.https(EmbeddedTomcat.IMPL, h);
        tc.start();
        port = c.getLocalPort();
    }

    private static long collections() {
        long n = 0;
        for (GarbageCollectorMXBean b : ManagementFactory.getGarbageCollectorMXBeans()) {
            n += Math.max(0, b.getCollectionCount());
        }
        return n;
    }

    /** One request with Connection: close, read until Tomcat closes the connection. */
    private String closedByServer(String protocol) throws IOException {
        try (SSLSocket s = (SSLSocket) client.getSocketFactory().createSocket("127.0.0.1", port)) {
            s.setSoTimeout(30_000);
            s.setEnabledProtocols(new String[] {protocol});
            OutputStream out = s.getOutputStream();
            out.write("GET /info HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            return new String(in.readAllBytes(), StandardCharsets.US_ASCII);
        }
    }

    private void serverSslsFreedAtClose(String protocol) throws Exception {
        closedByServer(protocol);
        // a collection in between would free the SSLs through the Cleaner
        // and hide the difference: such a round is not judged, another runs
        for (int round = 0; round < 5; round++) {
            // settled: nothing an earlier collection found is still queued for the Cleaner
            LiveCounts.settled();
            long gcs = collections();
            long before = Diagnostics.liveConnections();
            for (int i = 0; i < CONNECTIONS; i++) {
                String r = closedByServer(protocol);
                assertTrue(r.startsWith("HTTP/1.1 200") && r.contains("tls_protocol=" + protocol), r);
            }
            long after = Diagnostics.liveConnections();
            if (collections() == gcs) {
                assertEquals(before, after, CONNECTIONS + " connections Tomcat closed (" + protocol
                        + "), no GC: live native SSLs before and after");
                return;
            }
        }
        throw new AssertionError("a GC ran during each of 5 rounds; nothing judged");
    }

    @Test
    void tls13() throws Exception {
        serverSslsFreedAtClose("TLSv1.3");
    }

    @Test
    void tls12() throws Exception {
        serverSslsFreedAtClose("TLSv1.2");
    }
}
