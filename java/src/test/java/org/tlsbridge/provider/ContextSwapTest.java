package org.tlsbridge.provider;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.Test;
import org.tlsbridge.internal.Diagnostics;
import org.tlsbridge.test.Contexts;
import org.tlsbridge.test.EnginePair;
import org.tlsbridge.test.LiveCounts;
import org.tlsbridge.test.TestPki;

/**
 * Certificate renewal for engine users (docs/tomcat.md, "Reloading
 * certificates"): a new SSLContext serves new connections, an engine made
 * from the old one keeps working, and the old context's SSL_CTX is freed
 * once that engine is closed and neither it nor the old SSLContext is
 * reachable (the Cleaner drops the context's own reference).
 * Clients are SunJSSE so that only the servers' native objects count.
 */
class ContextSwapTest {
    private static final TestPki PKI = TestPki.get();

    private static String served(EnginePair p) throws Exception {
        X509Certificate leaf = (X509Certificate) p.client.getSession().getPeerCertificates()[0];
        return leaf.getPublicKey().getAlgorithm();
    }

    @Test
    void swapServesNewConnectionsAndFreesTheOldContextAfterItsLastEngine() throws Exception {
        SSLContext client = Contexts.client(Contexts.sun());
        LiveCounts base = LiveCounts.settled();

        SSLContext current = Contexts.server(Contexts.TLSBRIDGE, "rsa");
        EnginePair old = new EnginePair(client, current, false);
        old.handshake();
        assertEquals("RSA", served(old));

        // the swap: the application's reference now points at a context with the new certificate
        current = Contexts.server(Contexts.TLSBRIDGE, "ec");
        EnginePair fresh = new EnginePair(client, current, false);
        fresh.handshake();
        assertEquals("EC", served(fresh), "a new connection gets the new certificate");
        fresh.close(fresh.server);
        fresh = null;

        byte[] ping = "still here".getBytes(StandardCharsets.US_ASCII);
        assertArrayEquals(ping, old.send(old.client, ping), "the engine made before the swap still reads");
        assertArrayEquals(ping, old.send(old.server, ping), "and writes");
        assertEquals(base.contexts + 2, LiveCounts.await(Diagnostics::liveContexts, base.contexts + 2),
                "the old SSL_CTX lives on while its engine is open: " + LiveCounts.now());

        old.close(old.server);
        old = null;
        assertEquals(base.contexts + 1, LiveCounts.await(Diagnostics::liveContexts, base.contexts + 1),
                "closing the last engine of the old context frees its SSL_CTX: " + LiveCounts.now());
        assertEquals(base.connections, LiveCounts.await(Diagnostics::liveConnections, base.connections),
                "no SSL left: " + LiveCounts.now());

        current = null;
        assertEquals(base.contexts, LiveCounts.await(Diagnostics::liveContexts, base.contexts),
                "and the new one once it is dropped too: " + LiveCounts.now());
        assertEquals(base.keys, LiveCounts.await(Diagnostics::liveKeys, base.keys), "key material freed");
    }
}
