package org.tlsbridge.features;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.security.Provider;
import java.security.cert.X509Certificate;
import java.util.List;
import javax.net.ssl.ExtendedSSLSession;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SNIMatcher;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLParameters;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.tlsbridge.TlsBridgeProvider;
import org.tlsbridge.test.Contexts;
import org.tlsbridge.test.EnginePair;

/** ALPN, SNI, resumption and identity through the standard JSSE API, engine to engine. */
class FeaturesTest {
    private static Provider provider(String name) {
        return name.equals("tlsbridge") ? Contexts.TLSBRIDGE : Contexts.sun();
    }

    private static void alpn(EnginePair p, String[] client, String[] server) {
        SSLParameters c = p.client.getSSLParameters();
        c.setApplicationProtocols(client);
        p.client.setSSLParameters(c);
        SSLParameters s = p.server.getSSLParameters();
        s.setApplicationProtocols(server);
        p.server.setSSLParameters(s);
    }

    @ParameterizedTest
    @CsvSource({"tlsbridge,tlsbridge,TLSv1.3", "tlsbridge,sunjsse,TLSv1.2", "sunjsse,tlsbridge,TLSv1.3",
        "sunjsse,tlsbridge,TLSv1.2"})
    void alpnServerOrderWins(String client, String server, String protocol) throws Exception {
        EnginePair p = new EnginePair(Contexts.client(provider(client)),
                Contexts.server(provider(server), "rsa"), true);
        p.client.setEnabledProtocols(new String[] {protocol});
        alpn(p, new String[] {"http/1.1", "h2"}, new String[] {"h2", "http/1.1"});
        p.handshake();
        assertEquals("h2", p.client.getApplicationProtocol());
        assertEquals("h2", p.server.getApplicationProtocol());
    }

    @Test
    void alpnNoOverlapFails() throws Exception {
        EnginePair p = new EnginePair(Contexts.client(Contexts.TLSBRIDGE),
                Contexts.server(Contexts.TLSBRIDGE, "rsa"), false);
        alpn(p, new String[] {"spdy/3"}, new String[] {"h2"});
        SSLHandshakeException e = assertThrows(SSLHandshakeException.class, p::handshake);
        assertTrue(e.getMessage().contains("application protocol") || e.getMessage().contains("no_application"),
                e.getMessage());
    }

    @Test
    void alpnAbsentMeansEmptyString() throws Exception {
        EnginePair p = new EnginePair(Contexts.client(Contexts.TLSBRIDGE),
                Contexts.server(Contexts.TLSBRIDGE, "rsa"), false);
        assertNull(p.client.getApplicationProtocol());
        p.handshake();
        assertEquals("", p.client.getApplicationProtocol());
        assertEquals("", p.server.getApplicationProtocol());
    }

    @Test
    void alpnSelectorOnEngine() throws Exception {
        EnginePair p = new EnginePair(Contexts.client(Contexts.sun()),
                Contexts.server(Contexts.TLSBRIDGE, "rsa"), true);
        alpn(p, new String[] {"a", "b", "c"}, new String[0]);
        String[] seen = new String[1];
        p.server.setHandshakeApplicationProtocolSelector((engine, offered) -> {
            seen[0] = String.join(",", offered) + "|" + engine.getHandshakeSession().getProtocol();
            return "b";
        });
        p.handshake();
        assertEquals("b", p.client.getApplicationProtocol());
        assertEquals("b", p.server.getApplicationProtocol());
        assertTrue(seen[0].startsWith("a,b,c|"), seen[0]);
    }

    @Test
    void sniChoosesCertificateAndMatchersCanRefuse() throws Exception {
        SSLContext server = Contexts.server(Contexts.TLSBRIDGE, "rsa", "other", "ec");
        EnginePair p = new EnginePair(Contexts.client(Contexts.TLSBRIDGE), server, false, "other.example", 443);
        p.handshake();
        X509Certificate leaf = (X509Certificate) p.client.getSession().getPeerCertificates()[0];
        assertEquals("CN=other.example", leaf.getSubjectX500Principal().getName());
        List<?> names = ((ExtendedSSLSession) p.server.getSession()).getRequestedServerNames();
        assertEquals(List.of(new SNIHostName("other.example")), names);

        EnginePair refused = new EnginePair(Contexts.client(Contexts.TLSBRIDGE), server, false, "www.example.org", 443);
        SSLParameters sp = refused.server.getSSLParameters();
        sp.setSNIMatchers(List.of(SNIHostName.createSNIMatcher("(.*\\.)?example\\.test")));
        refused.server.setSSLParameters(sp);
        assertThrows(SSLHandshakeException.class, refused::handshake);

        EnginePair accepted = new EnginePair(Contexts.client(Contexts.TLSBRIDGE), server, false, "a.example.test", 443);
        SSLParameters ap = accepted.server.getSSLParameters();
        SNIMatcher m = SNIHostName.createSNIMatcher("(.*\\.)?example\\.test");
        ap.setSNIMatchers(List.of(m));
        accepted.server.setSSLParameters(ap);
        accepted.handshake();
    }

    @ParameterizedTest
    @CsvSource({"TLSv1.2", "TLSv1.3"})
    void clientResumesWithSameHostAndPort(String protocol) throws Exception {
        SSLContext client = Contexts.client(Contexts.TLSBRIDGE);
        SSLContext server = Contexts.server(Contexts.TLSBRIDGE, "rsa");
        EnginePair first = new EnginePair(client, server, true, "localhost", 8443);
        first.client.setEnabledProtocols(new String[] {protocol});
        first.handshake();
        first.send(first.server, new byte[10]); // a TLS 1.3 ticket rides along with data
        assertFalse(TlsBridgeProvider.isResumed(first.client.getSession()));
        EnginePair second = new EnginePair(client, server, true, "localhost", 8443);
        second.client.setEnabledProtocols(new String[] {protocol});
        second.handshake();
        assertTrue(TlsBridgeProvider.isResumed(second.client.getSession()), "client resumed");
        assertTrue(TlsBridgeProvider.isResumed(second.server.getSession()), "server resumed");
        assertEquals(first.client.getSession().getPeerCertificates()[0],
                second.client.getSession().getPeerCertificates()[0]);
        EnginePair elsewhere = new EnginePair(client, server, true, "localhost", 9443);
        elsewhere.client.setEnabledProtocols(new String[] {protocol});
        elsewhere.handshake();
        assertFalse(TlsBridgeProvider.isResumed(elsewhere.client.getSession()), "other port: full handshake");
    }

    /** SunJSSE's system properties for a side's defaults are honoured too. */
    @Test
    void jdkDefaultSuiteAndProtocolProperties() throws Exception {
        SSLContext server;
        System.setProperty("jdk.tls.server.cipherSuites", "TLS_BOGUS_SUITE,TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384");
        System.setProperty("jdk.tls.server.protocols", "TLSv1.2");
        try {
            server = Contexts.server(Contexts.TLSBRIDGE, "rsa");
        } finally {
            System.clearProperty("jdk.tls.server.cipherSuites");
            System.clearProperty("jdk.tls.server.protocols");
        }
        EnginePair p = new EnginePair(Contexts.client(Contexts.TLSBRIDGE), server, true);
        assertEquals(List.of("TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"), List.of(p.server.getEnabledCipherSuites()));
        p.handshake();
        assertEquals("TLSv1.2", p.server.getSession().getProtocol());
        assertEquals("TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", p.server.getSession().getCipherSuite());
    }

    @Test
    void httpsIdentityAgainstIpAddresses() throws Exception {
        SSLContext server = Contexts.server(Contexts.TLSBRIDGE, "rsa");
        for (String host : new String[] {"127.0.0.1", "127.0.0.2"}) {
            EnginePair p = new EnginePair(Contexts.client(Contexts.TLSBRIDGE), server, false, host, 443);
            SSLParameters params = p.client.getSSLParameters();
            params.setEndpointIdentificationAlgorithm("HTTPS");
            p.client.setSSLParameters(params);
            if (host.endsWith(".1")) {
                p.handshake();
            } else {
                assertThrows(SSLHandshakeException.class, p::handshake);
            }
        }
    }
}
