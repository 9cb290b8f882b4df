package org.tlsbridge.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLSession;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.tlsbridge.test.Contexts;
import org.tlsbridge.test.EngineChannel;
import org.tlsbridge.test.EnginePair;
import org.tlsbridge.test.OneShotServer;
import org.tlsbridge.test.Processes;
import org.tlsbridge.test.TestPki;

/**
 * Ed25519 and Ed448 certificates, server and client side, against SunJSSE
 * and openssl s_server/s_client, on TLS 1.3 and TLS 1.2 (where both OpenSSL
 * 3.0 and SunJSSE sign with EdDSA under the ECDHE_ECDSA suites, RFC 8422).
 */
class EdDsaTest {
    private static final TestPki PKI = TestPki.get();

    private static String keyOf(Certificate[] chain) {
        assertTrue(chain != null && chain.length > 0, "no certificate");
        return ((X509Certificate) chain[0]).getPublicKey().getAlgorithm() + " "
                + ((X509Certificate) chain[0]).getSigAlgName() + " "
                + ((X509Certificate) chain[0]).getSubjectX500Principal().getName();
    }

    /** The curve of a certificate's EdDSA key ("Ed25519"/"Ed448"), or its algorithm. */
    private static String curve(Certificate[] chain) {
        assertTrue(chain != null && chain.length > 0, "no certificate");
        java.security.PublicKey k = chain[0].getPublicKey();
        if (k instanceof java.security.interfaces.EdECKey) {
            return ((java.security.interfaces.EdECKey) k).getParams().getName();
        }
        return k.getAlgorithm();
    }

    private static String name(String key) {
        return key.equals("ed25519") ? "Ed25519" : "Ed448";
    }

    @ParameterizedTest(name = "{0} server {1}, {2} client, {3}")
    @CsvSource({"TLSBridge,ed25519,SunJSSE,TLSv1.3", "TLSBridge,ed448,SunJSSE,TLSv1.3",
        "TLSBridge,ed25519,SunJSSE,TLSv1.2", "TLSBridge,ed448,SunJSSE,TLSv1.2",
        "SunJSSE,ed25519,TLSBridge,TLSv1.3", "SunJSSE,ed448,TLSBridge,TLSv1.2",
        "TLSBridge,ed25519,TLSBridge,TLSv1.3", "TLSBridge,ed448,TLSBridge,TLSv1.2"})
    void edDsaServerAndClientCertificates(String serverProvider, String key, String clientProvider,
            String protocol) throws Exception {
        java.security.Provider sp = serverProvider.equals("SunJSSE") ? Contexts.sun() : Contexts.TLSBRIDGE;
        java.security.Provider cp = clientProvider.equals("SunJSSE") ? Contexts.sun() : Contexts.TLSBRIDGE;
        SSLContext server = Contexts.create(sp, "TLS", PKI.keyManagers(key), PKI.trustManagers());
        SSLContext client = Contexts.create(cp, "TLS", PKI.keyManagers("client-" + key), PKI.trustManagers());
        EnginePair pair = new EnginePair(client, server, false);
        pair.client.setEnabledProtocols(new String[] {protocol});
        pair.server.setNeedClientAuth(true);
        pair.handshake();
        SSLSession cs = pair.client.getSession();
        SSLSession ss = pair.server.getSession();
        assertEquals(protocol, cs.getProtocol());
        assertEquals(name(key), curve(cs.getPeerCertificates()), keyOf(cs.getPeerCertificates()));
        assertEquals(name(key), curve(ss.getLocalCertificates()));
        assertEquals(name(key), curve(ss.getPeerCertificates()), "the client's certificate");
        assertEquals(name(key), curve(cs.getLocalCertificates()));
        if (protocol.equals("TLSv1.2")) {
            assertTrue(cs.getCipherSuite().startsWith("TLS_ECDHE_ECDSA_"), cs.getCipherSuite());
        }
        assertEquals("hi", new String(pair.send(pair.client, "hi".getBytes(StandardCharsets.US_ASCII)),
                StandardCharsets.US_ASCII));
    }

    /**
     * A tlsbridge server holding RSA and EdDSA keys serves what the client's
     * signature_algorithms ask for. The list also judges the chain (no
     * signature_algorithms_cert is sent), so the EdDSA leaves chain to an
     * Ed25519 CA and the RSA case names rsa_pkcs1_sha256 for its CA's signature.
     * The server's cipher order is off: with it on, OpenSSL also orders
     * signature schemes by its own list, where ed25519 comes before RSA-PSS.
     */
    @ParameterizedTest(name = "keys {0}: s_client -sigalgs {1} {2}")
    @CsvSource({"rsa ed25519,ed25519,-tls1_3,Ed25519", "rsa ed25519,ed25519,-tls1_2,Ed25519",
        "rsa ed25519,ed25519:rsa_pss_rsae_sha256:rsa_pkcs1_sha256,-tls1_3,Ed25519",
        "rsa ed25519,rsa_pss_rsae_sha256:ed25519:rsa_pkcs1_sha256,-tls1_3,RSA",
        "ed25519 rsa,ed25519:rsa_pkcs1_sha256,-tls1_2,Ed25519", "rsa ed448,ed448:ed25519,-tls1_3,Ed448"})
    void serverPicksTheKeyTheClientAsksFor(String keys, String sigalgs, String flag, String expected)
            throws Exception {
        SSLContext ctx = Contexts.server(Contexts.TLSBRIDGE, keys.split(" "));
        String[] local = new String[1];
        try (OneShotServer srv = new OneShotServer()) {
            var done = srv.serve(ctx, 1, true, e -> {
                javax.net.ssl.SSLParameters p = e.getSSLParameters();
                p.setUseCipherSuitesOrder(false);
                e.setSSLParameters(p);
            }, c -> {
                local[0] = curve(c.engine.getSession().getLocalCertificates());
                byte[] in = c.read(6);
                c.write(new String(in, StandardCharsets.US_ASCII).toUpperCase().getBytes(StandardCharsets.US_ASCII));
            });
            Processes.Run r = Processes.run("hello\n".getBytes(StandardCharsets.US_ASCII), 30,
                    List.of("openssl", "s_client", "-connect", "127.0.0.1:" + srv.port, "-CAfile",
                            PKI.file("cas.pem").toString(), "-servername", "localhost", "-verify_return_error",
                            "-sigalgs", sigalgs, "-ign_eof", flag));
            done.get(30, TimeUnit.SECONDS);
            assertTrue(r.out.contains("HELLO"), r.toString());
            assertTrue(r.out.contains("Verify return code: 0 (ok)"), r.toString());
            assertTrue(r.out.contains("Peer signature type: "
                    + (expected.equals("RSA") ? "RSA-PSS" : expected.toLowerCase(java.util.Locale.ROOT))), r.toString());
        }
        assertEquals(expected, local[0]);
    }

    /** tlsbridge client against openssl s_server with an EdDSA certificate, presenting an EdDSA client certificate. */
    @ParameterizedTest(name = "s_server {0} {1}")
    @CsvSource({"ed25519,-tls1_3", "ed25519,-tls1_2", "ed448,-tls1_3", "ed448,-tls1_2"})
    void clientOfOpensslServer(String key, String flag) throws Exception {
        int port = Processes.freePort();
        try (Processes.Child server = Processes.start(PKI.dir, "openssl", "s_server", "-accept",
                "127.0.0.1:" + port, "-cert", key + ".pem", "-key", key + ".key", "-CAfile", "cas.pem",
                "-Verify", "1", "-verify_return_error", "-www", flag)) {
            assertTrue(server.await("ACCEPT", 10_000), server.output());
            SSLContext ctx = Contexts.create(Contexts.TLSBRIDGE, "TLS", PKI.keyManagers("client-" + key),
                    PKI.trustManagers());
            SSLEngine e = ctx.createSSLEngine("localhost", port);
            e.setUseClientMode(true);
            try (EngineChannel c = new EngineChannel(e,
                    SocketChannel.open(new InetSocketAddress(InetAddress.getLoopbackAddress(), port)), false)) {
                c.handshake();
                assertEquals(name(key), curve(e.getSession().getPeerCertificates()));
                assertEquals(name(key), curve(e.getSession().getLocalCertificates()));
                c.write("GET / HTTP/1.0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                String page = new String(c.readAll(), StandardCharsets.UTF_8);
                assertTrue(page.startsWith("HTTP/1.0 200 ok"), "page: [" + page + "] server: " + server.output());
                assertTrue(page.contains("Client certificate"), page);
                assertTrue(page.contains("Subject: CN=tlsbridge test client " + key), page);
            }
        }
    }

    /** openssl s_client with an EdDSA client certificate against a tlsbridge server that needs one. */
    @ParameterizedTest(name = "s_client {0} {1}")
    @CsvSource({"ed25519,-tls1_3", "ed25519,-tls1_2", "ed448,-tls1_3"})
    void serverForOpensslClientWithEdDsaCertificate(String key, String flag) throws Exception {
        SSLContext ctx = Contexts.server(Contexts.TLSBRIDGE, key);
        List<String> seen = new ArrayList<>();
        try (OneShotServer srv = new OneShotServer()) {
            var done = srv.serve(ctx, 1, false, e -> e.setNeedClientAuth(true), c -> {
                byte[] in = c.read(6);
                seen.add(curve(c.engine.getSession().getPeerCertificates()));
                c.write(new String(in, StandardCharsets.US_ASCII).toUpperCase().getBytes(StandardCharsets.US_ASCII));
            });
            Processes.Run r = Processes.run("hello\n".getBytes(StandardCharsets.US_ASCII), 30,
                    List.of("openssl", "s_client", "-connect", "127.0.0.1:" + srv.port, "-CAfile",
                            PKI.file("cas.pem").toString(), "-cert", PKI.file("client-" + key + ".pem").toString(),
                            "-key", PKI.file("client-" + key + ".key").toString(), "-servername", "localhost",
                            "-verify_return_error", "-ign_eof", flag));
            done.get(30, TimeUnit.SECONDS);
            assertTrue(r.out.contains("HELLO"), r.toString());
            assertTrue(r.out.contains("Peer signature type: " + key), r.toString());
        }
        assertEquals(List.of(name(key)), seen);
    }
}
