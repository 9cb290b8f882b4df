package org.tlsbridge.tomcat;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import org.junit.jupiter.api.Test;
import org.tlsbridge.engine.TlsBridgeEngine;
import org.tlsbridge.internal.Native;
import org.tlsbridge.test.Contexts;
import org.tlsbridge.test.EnginePair;
import org.tlsbridge.test.TestPki;

/**
 * A host's ciphers held by its SSL_CTX (set once at init): Tomcat's engines,
 * which enable exactly that list, parse no list of their own yet negotiate
 * only those suites in that order; an engine given other suites still gets
 * exactly its own. The client is SunJSSE.
 */
class HeldCiphersTest {
    private static final String CHACHA = "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256";
    private static final String AES128 = "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256";
    private static final String AES256 = "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384";
    private static final String T13_AES128 = "TLS_AES_128_GCM_SHA256";
    private static final String T13_AES256 = "TLS_AES_256_GCM_SHA384";
    private static final String T13_CHACHA = "TLS_CHACHA20_POLY1305_SHA256";
    private static final String[] ALL_PROTOCOLS = {"TLSv1.3", "TLSv1.2"};

    private static TlsBridgeSSLContext host(String... ciphers) throws Exception {
        TlsBridgeSSLContext c = new TlsBridgeSSLContext("TLS", 0, null, null, ciphers);
        TestPki pki = TestPki.get();
        c.init(pki.keyManagers("rsa"), pki.trustManagers(), null);
        return c;
    }

    /** A server engine as Tomcat's endpoint makes one; its SSL exists once this returns. */
    private static SSLEngine engine(TlsBridgeSSLContext ctx, String[] suites, boolean serverOrder) throws SSLException {
        SSLEngine e = ctx.createSSLEngine();
        e.setUseClientMode(false);
        e.setEnabledCipherSuites(suites);
        e.setEnabledProtocols(ALL_PROTOCOLS);
        SSLParameters p = e.getSSLParameters();
        p.setUseCipherSuitesOrder(serverOrder);
        e.setSSLParameters(p);
        e.beginHandshake();
        return e;
    }

    static boolean ownCiphers(SSLEngine e) {
        TlsBridgeEngine t = (TlsBridgeEngine) e;
        long p = t.acquire();
        try {
            return Native.ownCiphers(p);
        } finally {
            t.release();
        }
    }

    /** Handshakes a SunJSSE client offering these suites and protocols; returns "protocol suite". */
    private static String negotiate(SSLEngine server, String[] offer, String... protocols) throws SSLException {
        SSLEngine client = Contexts.client(Contexts.sun()).createSSLEngine("localhost", 443);
        client.setUseClientMode(true);
        client.setEnabledCipherSuites(offer);
        client.setEnabledProtocols(protocols.length == 0 ? ALL_PROTOCOLS : protocols);
        EnginePair pair = new EnginePair(client, server, false);
        pair.handshake();
        assertEquals(client.getSession().getCipherSuite(), server.getSession().getCipherSuite());
        return server.getSession().getProtocol() + " " + server.getSession().getCipherSuite();
    }

    private static void refused(SSLEngine server, String[] offer, String... protocols) {
        assertThrows(Throwable.class, () -> negotiate(server, offer, protocols));
    }

    @Test
    void tls12HostListIsHeldAndNegotiatedInItsOrder() throws Exception {
        String[] hostList = {CHACHA, AES128};
        TlsBridgeSSLContext ctx = host(hostList);
        String[] offer = {AES256, AES128, CHACHA, T13_AES128};

        SSLEngine s = engine(ctx, hostList, true);
        assertFalse(ownCiphers(s), "an engine enabling the host's list must use the SSL_CTX's");
        assertArrayEquals(hostList, s.getEnabledCipherSuites());
        assertEquals("TLSv1.2 " + CHACHA, negotiate(s, offer));

        SSLEngine clientOrder = engine(ctx, hostList, false);
        assertFalse(ownCiphers(clientOrder));
        assertEquals("TLSv1.2 " + AES128, negotiate(clientOrder, offer));

        // a TLS 1.2-only list refuses TLS 1.3 and any suite outside it, as before
        refused(engine(ctx, hostList, true), offer, "TLSv1.3");
        refused(engine(ctx, hostList, true), new String[] {AES256, T13_AES128});
    }

    @Test
    void tls13OnlyHostList() throws Exception {
        String[] hostList = {T13_CHACHA, T13_AES256};
        TlsBridgeSSLContext ctx = host(hostList);
        String[] offer = {T13_AES128, T13_AES256, T13_CHACHA, AES128};
        SSLEngine s = engine(ctx, hostList, true);
        assertFalse(ownCiphers(s));
        assertEquals("TLSv1.3 " + T13_CHACHA, negotiate(s, offer));
        refused(engine(ctx, hostList, true), offer, "TLSv1.2");
        refused(engine(ctx, hostList, true), new String[] {T13_AES128, AES128});
    }

    @Test
    void anEngineWithOtherSuitesGetsExactlyItsOwn() throws Exception {
        String[] hostList = {CHACHA, AES128, T13_CHACHA};
        TlsBridgeSSLContext ctx = host(hostList);
        String[] offer = {CHACHA, AES128, AES256, T13_AES128, T13_CHACHA, T13_AES256};

        String[] own = {AES256, T13_AES256};
        SSLEngine s = engine(ctx, own, true);
        assertTrue(ownCiphers(s), "suites other than the host's need the engine's own list");
        assertArrayEquals(own, s.getEnabledCipherSuites());
        assertEquals("TLSv1.3 " + T13_AES256, negotiate(s, offer));
        assertEquals("TLSv1.2 " + AES256, negotiate(engine(ctx, own, true), offer, "TLSv1.2"));
        refused(engine(ctx, own, true), new String[] {CHACHA, AES128, T13_CHACHA});

        // the same suites in another order are another list: the engine's order rules
        String[] reordered = {AES128, CHACHA, T13_CHACHA};
        SSLEngine r = engine(ctx, reordered, true);
        assertTrue(ownCiphers(r));
        assertEquals("TLSv1.2 " + AES128, negotiate(r, offer, "TLSv1.2"));

        // and the host's list on the same context is still held
        SSLEngine h = engine(ctx, hostList, true);
        assertFalse(ownCiphers(h));
        assertEquals("TLSv1.2 " + CHACHA, negotiate(h, offer, "TLSv1.2"));
    }

    @Test
    void withoutAHostListOnlyTheDefaultsAreHeld() throws Exception {
        TlsBridgeSSLContext ctx = host((String[]) null);
        SSLEngine d = ctx.createSSLEngine();
        d.setUseClientMode(false);
        d.beginHandshake();
        assertFalse(ownCiphers(d), "the default suites are the SSL_CTX's");
        SSLEngine s = engine(ctx, new String[] {CHACHA, AES128}, true);
        assertTrue(ownCiphers(s));
        assertEquals("TLSv1.2 " + CHACHA, negotiate(s, new String[] {AES128, CHACHA}));
    }
}
