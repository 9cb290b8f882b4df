package org.tlsbridge.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.management.ManagementFactory;
import java.net.Socket;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.Map;
import java.util.TreeMap;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509ExtendedTrustManager;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.tlsbridge.test.Contexts;
import org.tlsbridge.test.EnginePair;
import org.tlsbridge.test.TestPki;

/**
 * What a full handshake asks of the application besides OpenSSL's work:
 * KeyManager and TrustManager calls per handshake, counted (not timed), and
 * the Java heap both engines allocate, printed for the record. The key
 * material is converted once per alias (KeyBridge), so a handshake asks
 * the KeyManager to choose and for the chain it compares, and nothing else.
 */
class HandshakeCostTest {
    private static final int ROUNDS = 40;

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"rsa", "ec"})
    void fullHandshakeCalls(String key) throws Exception {
        TestPki pki = TestPki.get();
        Counting km = new Counting((X509ExtendedKeyManager) pki.keyManagers(key)[0]);
        CountingTrust tm = new CountingTrust((X509ExtendedTrustManager) pki.trustManagers()[0]);
        SSLContext server = Contexts.create(Contexts.TLSBRIDGE, "TLS", new KeyManager[] {km}, null);
        SSLContext client = Contexts.create(Contexts.TLSBRIDGE, "TLS", null, new TrustManager[] {tm});
        for (int i = 0; i < 5; i++) {
            handshake(client, server);
        }
        km.calls.clear();
        tm.calls.clear();
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long tid = Thread.currentThread().getId();
        long before = mx.getThreadAllocatedBytes(tid);
        for (int i = 0; i < ROUNDS; i++) {
            handshake(client, server);
        }
        long bytes = (mx.getThreadAllocatedBytes(tid) - before) / ROUNDS;
        Map<String, Integer> calls = new TreeMap<>();
        km.calls.forEach((k, v) -> calls.put("km." + k, v));
        tm.calls.forEach((k, v) -> calls.put("tm." + k, v));
        System.out.println("HandshakeCostTest " + key + ": calls in " + ROUNDS + " full handshakes: " + calls + "; "
                + bytes + " bytes allocated per handshake (client+server engines, one thread)");
        assertEquals(ROUNDS, calls.get("tm.checkServerTrusted"), "TrustManager calls: " + calls);
        // the key was parsed during the warm-up handshakes: never again
        assertEquals(null, calls.get("km.getPrivateKey"), "private key fetched again: " + calls);
        assertEquals(ROUNDS, calls.get("km.getCertificateChain"), "chains fetched: " + calls);
    }

    private static void handshake(SSLContext client, SSLContext server) throws Exception {
        EnginePair p = new EnginePair(client, server, false, null, -1);
        p.handshake();
        // the chain the server sent, as the client saw it, is the server session's own
        assertArrayEquals(p.client.getSession().getPeerCertificates(), p.server.getSession().getLocalCertificates());
        p.client.closeOutbound();
        p.server.closeOutbound();
    }

    private static final class Counting extends X509ExtendedKeyManager {
        final Map<String, Integer> calls = new TreeMap<>();
        private final X509ExtendedKeyManager km;

        Counting(X509ExtendedKeyManager km) {
            this.km = km;
        }

        private void count(String m) {
            calls.merge(m, 1, Integer::sum);
        }

        @Override
        public String[] getClientAliases(String keyType, Principal[] issuers) {
            count("getClientAliases");
            return km.getClientAliases(keyType, issuers);
        }

        @Override
        public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
            count("chooseClientAlias");
            return km.chooseClientAlias(keyType, issuers, socket);
        }

        @Override
        public String[] getServerAliases(String keyType, Principal[] issuers) {
            count("getServerAliases");
            return km.getServerAliases(keyType, issuers);
        }

        @Override
        public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
            count("chooseServerAlias");
            return km.chooseServerAlias(keyType, issuers, socket);
        }

        @Override
        public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
            count("chooseEngineServerAlias");
            return km.chooseEngineServerAlias(keyType, issuers, engine);
        }

        @Override
        public X509Certificate[] getCertificateChain(String alias) {
            count("getCertificateChain");
            return km.getCertificateChain(alias);
        }

        @Override
        public PrivateKey getPrivateKey(String alias) {
            count("getPrivateKey");
            return km.getPrivateKey(alias);
        }
    }

    private static final class CountingTrust extends X509ExtendedTrustManager {
        final Map<String, Integer> calls = new TreeMap<>();
        private final X509ExtendedTrustManager tm;

        CountingTrust(X509ExtendedTrustManager tm) {
            this.tm = tm;
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                throws CertificateException {
            calls.merge("checkServerTrusted", 1, Integer::sum);
            tm.checkServerTrusted(chain, authType, engine);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                throws CertificateException {
            tm.checkClientTrusted(chain, authType, engine);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
                throws CertificateException {
            tm.checkClientTrusted(chain, authType, socket);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
                throws CertificateException {
            tm.checkServerTrusted(chain, authType, socket);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            tm.checkClientTrusted(chain, authType);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            tm.checkServerTrusted(chain, authType);
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return tm.getAcceptedIssuers();
        }
    }
}
