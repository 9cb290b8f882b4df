package org.tlsbridge.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.Socket;
import java.security.Provider;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509ExtendedTrustManager;
import javax.net.ssl.X509TrustManager;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.tlsbridge.test.Contexts;
import org.tlsbridge.test.EnginePair;
import org.tlsbridge.test.TestPki;

/** Trust bridging: authType, endpoint identification, client certificates. */
class TrustTest {
    /** Delegates to the PKIX trust manager and writes down what it was asked. */
    static final class Recording extends X509ExtendedTrustManager {
        final X509ExtendedTrustManager real =
                (X509ExtendedTrustManager) TestPki.get().trustManagers()[0];
        final List<String> calls = Collections.synchronizedList(new ArrayList<>());

        @Override
        public void checkClientTrusted(X509Certificate[] c, String a, Socket s) throws CertificateException {
            calls.add("client:" + a);
            real.checkClientTrusted(c, a, s);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] c, String a, Socket s) throws CertificateException {
            calls.add("server:" + a);
            real.checkServerTrusted(c, a, s);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] c, String a, SSLEngine e) throws CertificateException {
            calls.add("client:" + a + ":" + e.getHandshakeSession().getProtocol());
            real.checkClientTrusted(c, a, e);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] c, String a, SSLEngine e) throws CertificateException {
            calls.add("server:" + a + ":" + e.getHandshakeSession().getProtocol());
            real.checkServerTrusted(c, a, e);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] c, String a) throws CertificateException {
            calls.add("client:" + a);
            real.checkClientTrusted(c, a);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] c, String a) throws CertificateException {
            calls.add("server:" + a);
            real.checkServerTrusted(c, a);
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return real.getAcceptedIssuers();
        }
    }

    private static List<String> authTypes(Provider client, Provider server, String protocol, String suite,
            String key) throws Exception {
        Recording ct = new Recording();
        Recording st = new Recording();
        SSLContext c = Contexts.create(client, "TLS", TestPki.get().keyManagers("client"), new TrustManager[] {ct});
        SSLContext s = Contexts.create(server, "TLS", TestPki.get().keyManagers(key), new TrustManager[] {st});
        EnginePair p = new EnginePair(c, s, false);
        p.client.setEnabledProtocols(new String[] {protocol});
        p.client.setEnabledCipherSuites(new String[] {suite});
        p.server.setNeedClientAuth(true);
        p.handshake();
        List<String> all = new ArrayList<>(ct.calls);
        all.addAll(st.calls);
        return all;
    }

    /** The same authType strings SunJSSE passes, on both sides. */
    @ParameterizedTest
    @CsvSource({"TLSv1.3,TLS_AES_128_GCM_SHA256,rsa", "TLSv1.2,TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,rsa",
        "TLSv1.2,TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,ec"})
    void authTypeMatchesSunJsse(String protocol, String suite, String key) throws Exception {
        List<String> sun = authTypes(Contexts.sun(), Contexts.sun(), protocol, suite, key);
        List<String> ours = authTypes(Contexts.TLSBRIDGE, Contexts.TLSBRIDGE, protocol, suite, key);
        assertEquals(2, ours.size(), ours.toString());
        assertEquals(sun, ours);
    }

    private static EnginePair pairFor(SSLContext client, String host, String alg) {
        EnginePair p = new EnginePair(client, Contexts.server(Contexts.TLSBRIDGE, "rsa"), true);
        SSLEngine e = client.createSSLEngine(host, 443);
        e.setUseClientMode(true);
        SSLParameters params = e.getSSLParameters();
        params.setEndpointIdentificationAlgorithm(alg);
        p.client.setSSLParameters(params);
        return p;
    }

    @Test
    void httpsIdentificationRejectsAnotherHost() throws Exception {
        SSLContext c = Contexts.client(Contexts.TLSBRIDGE);
        SSLContext s = Contexts.server(Contexts.TLSBRIDGE, "other");
        EnginePair bad = new EnginePair(c, s, true);
        SSLParameters params = bad.client.getSSLParameters();
        params.setEndpointIdentificationAlgorithm("HTTPS");
        bad.client.setSSLParameters(params);
        SSLHandshakeException e = assertThrows(SSLHandshakeException.class, bad::handshake);
        assertTrue(String.valueOf(e.getCause()).contains("localhost"), String.valueOf(e.getCause()));

        EnginePair good = pairFor(c, "localhost", "HTTPS");
        good.handshake();
    }

    @Test
    void plainTrustManagerStillGetsIdentityChecked() throws Exception {
        X509ExtendedTrustManager real = (X509ExtendedTrustManager) TestPki.get().trustManagers()[0];
        X509TrustManager plain = new X509TrustManager() {
            @Override
            public void checkClientTrusted(X509Certificate[] c, String a) throws CertificateException {
                real.checkClientTrusted(c, a);
            }

            @Override
            public void checkServerTrusted(X509Certificate[] c, String a) throws CertificateException {
                real.checkServerTrusted(c, a);
            }

            @Override
            public X509Certificate[] getAcceptedIssuers() {
                return real.getAcceptedIssuers();
            }
        };
        SSLContext c = Contexts.create(Contexts.TLSBRIDGE, "TLS", null, new TrustManager[] {plain});
        EnginePair bad = new EnginePair(c, Contexts.server(Contexts.TLSBRIDGE, "other"), false);
        SSLParameters params = bad.client.getSSLParameters();
        params.setEndpointIdentificationAlgorithm("HTTPS");
        bad.client.setSSLParameters(params);
        assertThrows(SSLHandshakeException.class, bad::handshake);
        EnginePair good = new EnginePair(c, Contexts.server(Contexts.TLSBRIDGE, "rsa"), false);
        good.client.setSSLParameters(params);
        good.handshake();
    }

    @ParameterizedTest
    @CsvSource({"TLSv1.2", "TLSv1.3"})
    void clientCertificates(String protocol) throws Exception {
        SSLContext server = Contexts.server(Contexts.TLSBRIDGE, "rsa");
        EnginePair need = new EnginePair(Contexts.clientWithCert(Contexts.TLSBRIDGE), server, true);
        need.client.setEnabledProtocols(new String[] {protocol});
        need.server.setNeedClientAuth(true);
        need.handshake();
        X509Certificate peer = (X509Certificate) need.server.getSession().getPeerCertificates()[0];
        assertEquals("CN=tlsbridge test client", peer.getSubjectX500Principal().getName());
        assertNotNull(need.client.getSession().getLocalCertificates());
        assertArrayEquals(need.server.getSession().getPeerCertificates(),
                need.client.getSession().getLocalCertificates());

        EnginePair missing = new EnginePair(Contexts.client(Contexts.TLSBRIDGE), server, true);
        missing.client.setEnabledProtocols(new String[] {protocol});
        missing.server.setNeedClientAuth(true);
        assertThrows(SSLHandshakeException.class, missing::handshake);

        EnginePair want = new EnginePair(Contexts.client(Contexts.TLSBRIDGE), server, false);
        want.client.setEnabledProtocols(new String[] {protocol});
        want.server.setWantClientAuth(true);
        want.handshake();
        assertThrows(SSLPeerUnverifiedException.class, () -> want.server.getSession().getPeerCertificates());
    }
}
