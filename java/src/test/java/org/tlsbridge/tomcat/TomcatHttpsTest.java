package org.tlsbridge.tomcat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.SplittableRandom;
import java.util.regex.Matcher;
import java.util.stream.Stream;
import java.util.regex.Pattern;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.util.ServerInfo;
import org.apache.tomcat.util.net.SSLHostConfig;
import org.apache.tomcat.util.net.SSLHostConfigCertificate.Type;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.tlsbridge.TlsBridgeProvider;
import org.tlsbridge.test.Processes;

/**
 * Embedded Tomcat (10.1 or 11, whichever is on the class path) serving
 * through TlsBridgeImplementation on loopback, checked with real clients:
 * curl and openssl s_client.
 *
 * <p>Connectors: "main" (heap network buffers; host _default_ with an RSA
 * PKCS#12 and an EC PEM certificate with encrypted key, host other.example
 * from JKS with Java-named ciphers; HTTP/2 upgrade), "direct"
 * (socket.directSslBuffer, RSA PEM), "mtls" (client certificate required,
 * legacy-encrypted RSA PEM key, tickets disabled, server cipher order), "named"
 * (CBC and static-RSA suites named in ciphers).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class TomcatHttpsTest {
    private static final int BIG = 100 << 20;

    private TomcatPki pki;
    @AutoClose
    private EmbeddedTomcat tc;
    private int main;
    private int direct;
    private int mtls;
    private int named;
    private int grouped;
    private SSLHostConfig namedHost;
    private SSLHostConfig mtlsHost;
    private Path big;
    private String bigSha;

    @BeforeAll
    void start() throws Exception {
        String expect = System.getProperty("tlsbridge.tomcat.major");
        System.out.println("Tomcat under test: " + ServerInfo.getServerInfo());
        if (expect != null && !expect.isEmpty()) {
            assertTrue(ServerInfo.getServerNumber().startsWith(expect + "."),
                    "expected Tomcat " + expect + ".x on the class path, found " + ServerInfo.getServerNumber());
        }
        pki = TomcatPki.get();
        big = Files.createTempFile("tlsbridge-big", ".bin");
        bigSha = writeRandom(big, BIG);
        tc = new EmbeddedTomcat(big);

        SSLHostConfig def = EmbeddedTomcat.host("_default_");
        EmbeddedTomcat.keystore(def, Type.RSA, pki.path("rsa.p12"), "PKCS12");
        EmbeddedTomcat.pem(def, Type.EC, pki.path("ec-enc.key"), pki.path("ec.pem"), pki.path("ca.pem"),
                TomcatPki.EC_KEY_PASSWORD);
        SSLHostConfig other = EmbeddedTomcat.host("other.example");
        EmbeddedTomcat.keystore(other, Type.RSA, pki.path("other.jks"), "JKS");
        try {
            // Tomcat 11: TLS 1.3 suites have their own attribute
            SSLHostConfig.class.getMethod("setCipherSuites", String.class).invoke(other, "TLS_AES_256_GCM_SHA384");
            other.setCiphers("TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384");
        } catch (NoSuchMethodException e) {
            other.setCiphers("TLS_AES_256_GCM_SHA384,TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384");
        }
        other.setCertificateVerification("optional");
        other.setCaCertificateFile(pki.path("ca.pem"));
        Connector m = tc.https(EmbeddedTomcat.IMPL, def, other);
        EmbeddedTomcat.http2(m);

        SSLHostConfig d = EmbeddedTomcat.host("_default_");
        EmbeddedTomcat.pem(d, Type.RSA, pki.path("rsa.key"), pki.path("rsa.pem"), null, null);
        Connector dc = tc.https(EmbeddedTomcat.IMPL, d);
        dc.setProperty("socket.directSslBuffer", "true");

        SSLHostConfig mt = EmbeddedTomcat.host("_default_");
        EmbeddedTomcat.pem(mt, Type.RSA, pki.path("rsa-legacy.key"), pki.path("rsa.pem"), null,
                TomcatPki.RSA_KEY_PASSWORD);
        mt.setCertificateVerification("required");
        mt.setTruststoreFile(pki.path("trust.p12"));
        mt.setTruststoreType("PKCS12");
        mt.setTruststorePassword("changeit");
        mt.setDisableSessionTickets(true);
        mt.setHonorCipherOrder(true);
        mt.setCiphers("ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-AES128-GCM-SHA256");
        Connector mc = tc.https(EmbeddedTomcat.IMPL, mt);
        mtlsHost = mt;

        SSLHostConfig nm = EmbeddedTomcat.host("_default_");
        EmbeddedTomcat.pem(nm, Type.RSA, pki.path("rsa.key"), pki.path("rsa.pem"), null, null);
        nm.setCiphers("ECDHE-RSA-AES128-SHA:AES128-SHA:ECDHE-RSA-AES128-GCM-SHA256");
        Connector nc = tc.https(EmbeddedTomcat.IMPL, nm);
        namedHost = nm;

        SSLHostConfig gr = EmbeddedTomcat.host("_default_");
        EmbeddedTomcat.pem(gr, Type.RSA, pki.path("rsa.key"), pki.path("rsa.pem"), null, null);
        gr.setGroups("secp384r1,X25519MLKEM768");
        Connector gc = tc.https(EmbeddedTomcat.IMPL, gr);

        tc.start();
        grouped = gc.getLocalPort();
        main = m.getLocalPort();
        direct = dc.getLocalPort();
        mtls = mc.getLocalPort();
        named = nc.getLocalPort();
    }

    @AfterAll
    void deleteBig() throws Exception {
        if (big != null) {
            Files.deleteIfExists(big);
        }
    }

    static String writeRandom(Path p, int size) throws Exception {
        MessageDigest md = TestServlets.sha256();
        SplittableRandom rnd = new SplittableRandom(42);
        byte[] buf = new byte[1 << 20];
        try (OutputStream out = Files.newOutputStream(p)) {
            for (int done = 0; done < size; done += buf.length) {
                for (int i = 0; i < buf.length; i += 8) {
                    long v = rnd.nextLong();
                    for (int k = 0; k < 8; k++) {
                        buf[i + k] = (byte) (v >>> (8 * k));
                    }
                }
                out.write(buf);
                md.update(buf);
            }
        }
        return HexFormat.of().formatHex(md.digest());
    }

    private static String field(String body, String key) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(key) + "=(.*)$").matcher(body);
        return m.find() ? m.group(1).trim() : null;
    }

    @Test
    @Order(1)
    void startupLogNamesTlsbridgeAndOpenSsl() {
        assertTrue(tc.logged("TLS for this connector is served by org.tlsbridge.tomcat.TlsBridgeImplementation: "
                + "tlsbridge "), "no tlsbridge start line in Tomcat's log");
        assertTrue(tc.logged(", " + org.tlsbridge.TlsBridgeProvider.openSslVersion() + ", native library"),
                "start line does not name the OpenSSL version serving");
    }

    /** The provider-core suites: protocol, standard name, OpenSSL name, server key bits (0: either key). */
    static Stream<Arguments> coreSuites() {
        return Stream.of(
                Arguments.of("TLSv1.3", "TLS_AES_128_GCM_SHA256", "TLS_AES_128_GCM_SHA256", 0),
                Arguments.of("TLSv1.3", "TLS_AES_256_GCM_SHA384", "TLS_AES_256_GCM_SHA384", 0),
                Arguments.of("TLSv1.3", "TLS_CHACHA20_POLY1305_SHA256", "TLS_CHACHA20_POLY1305_SHA256", 0),
                Arguments.of("TLSv1.2", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA-AES128-GCM-SHA256", 2048),
                Arguments.of("TLSv1.2", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA-AES256-GCM-SHA384", 2048),
                Arguments.of("TLSv1.2", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA-AES128-GCM-SHA256",
                        256));
    }

    @ParameterizedTest(name = "curl {0} {1}")
    @Order(2)
    @MethodSource("coreSuites")
    void curlEachSuite(String protocol, String std, String ossl, int bits) throws Exception {
        Processes.Run r = protocol.equals("TLSv1.3")
                ? Clients.curl(pki, "localhost", main, "/info", "--http1.1", "--tlsv1.3", "--tls13-ciphers", ossl)
                : Clients.curl(pki, "localhost", main, "/info", "--http1.1", "--tlsv1.2", "--tls-max", "1.2",
                        "--ciphers", ossl);
        assertEquals(0, r.exit, r.toString());
        assertTrue(r.out.contains("SSL connection using " + protocol + " / " + ossl), r.toString());
        assertEquals(std, field(r.out, "cipher_suite"), r.out);
        assertEquals(protocol, field(r.out, "tls_protocol"), r.out);
        int keySize = Integer.parseInt(field(r.out, "key_size"));
        assertEquals(std.contains("128") ? 128 : 256, keySize, r.out);
        assertTrue(field(r.out, "ssl_session_id").matches("[0-9a-f]{2,64}"), r.out);
        assertEquals("none", field(r.out, "peer"));
    }

    @ParameterizedTest(name = "s_client {0} {1}")
    @Order(3)
    @MethodSource("coreSuites")
    void sClientEachSuite(String protocol, String std, String ossl, int bits) throws Exception {
        Processes.Run r = protocol.equals("TLSv1.3")
                ? Clients.sClient(pki, main, "localhost", "/info", "-tls1_3", "-ciphersuites", ossl)
                : Clients.sClient(pki, main, "localhost", "/info", "-tls1_2", "-cipher", ossl);
        assertEquals(0, r.exit, r.toString());
        assertTrue(r.out.contains("Cipher is " + ossl), r.toString());
        assertTrue(r.out.contains("New, " + protocol + ", Cipher is"), r.toString());
        assertTrue(r.out.contains("Verify return code: 0 (ok)"), r.toString());
        if (bits > 0) {
            assertTrue(r.out.contains("Server public key is " + bits + " bit"), r.toString());
        }
        assertTrue(r.out.contains("HTTP/1.1 200"), r.toString());
        assertEquals(std, field(r.out, "cipher_suite"), r.out);
    }

    /** One host, RSA and EC certificates: OpenSSL picks per handshake from what the client can verify. */
    @ParameterizedTest(name = "{0} offering {1}")
    @Order(4)
    @CsvSource({
        "-tls1_3, -sigalgs, ECDSA+SHA256, 256",
        "-tls1_3, -sigalgs, rsa_pss_rsae_sha256, 2048",
        "-tls1_2, -cipher, ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256, 256",
        "-tls1_2, -cipher, ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES128-GCM-SHA256, 2048",
    })
    void severalCertificateTypesOnOneHost(String version, String option, String value, int bits) throws Exception {
        Processes.Run r = Clients.sClient(pki, main, "localhost", "/info", version, option, value);
        assertEquals(0, r.exit, r.toString());
        assertTrue(r.out.contains("Server public key is " + bits + " bit"), r.toString());
        assertTrue(r.out.contains("HTTP/1.1 200"), r.toString());
    }

    /**
     * SSLHostConfig groups: a group the client offers without a key share
     * (system s_client: a share for x25519 only, secp384r1 listed) is asked
     * for by HelloRetryRequest; applied by tlsbridge on JDK 17 and by Tomcat
     * itself on 20+ (through setNamedGroups); the negotiated group
     * reaches servlets through TlsBridgeSupport, Tomcat's session manager
     * attribute. X25519MLKEM768 is left out where OpenSSL lacks it.
     */
    @Test
    @Order(4)
    void groupsAttributeChoosesTheGroupAndServletsSeeIt() throws Exception {
        Processes.Run def = Clients.sClient(pki, main, "localhost", "/info", "-tls1_3");
        assertEquals(0, def.exit, def.toString());
        assertEquals("x25519", field(def.out, "named_group"), def.toString());
        Processes.Run g = Clients.sClient(pki, grouped, "localhost", "/info", "-tls1_3");
        assertEquals(0, g.exit, g.toString());
        assertEquals("secp384r1", field(g.out, "named_group"), g.toString());
        Processes.Run t12 = Clients.sClient(pki, grouped, "localhost", "/info", "-tls1_2");
        assertEquals(0, t12.exit, t12.toString());
        assertEquals("secp384r1", field(t12.out, "named_group"), t12.toString());
    }

    @Test
    @Order(4)
    void sniChoosesTheSslHostConfig() throws Exception {
        Processes.Run other = Clients.sClient(pki, main, "other.example", "/info");
        assertEquals(0, other.exit, other.toString());
        assertTrue(other.out.contains("subject=CN = other.example"), other.toString());
        Processes.Run local = Clients.sClient(pki, main, "localhost", "/info");
        assertEquals(0, local.exit, local.toString());
        assertTrue(local.out.contains("subject=CN = localhost"), local.toString());
        // curl checks the name against the certificate itself
        Processes.Run curl = Clients.curl(pki, "other.example", main, "/info", "--http1.1");
        assertEquals(0, curl.exit, curl.toString());
        assertEquals("other.example", field(curl.out, "server"));
    }

    @Test
    @Order(5)
    void javaNamedCiphersOfOneHostOnly() throws Exception {
        Processes.Run no = Clients.sClient(pki, main, "other.example", "/info", "-tls1_3", "-ciphersuites",
                "TLS_AES_128_GCM_SHA256");
        assertNotEquals(0, no.exit, no.toString());
        assertFalse(no.out.contains("HTTP/1.1 200"), no.toString());
        Processes.Run yes = Clients.sClient(pki, main, "other.example", "/info", "-tls1_3", "-ciphersuites",
                "TLS_AES_256_GCM_SHA384");
        assertEquals(0, yes.exit, yes.toString());
        assertEquals("TLS_AES_256_GCM_SHA384", field(yes.out, "cipher_suite"));
        Processes.Run no12 = Clients.sClient(pki, main, "other.example", "/info", "-tls1_2", "-cipher",
                "ECDHE-RSA-AES128-GCM-SHA256");
        assertNotEquals(0, no12.exit, no12.toString());
    }

    /**
     * The "main" connector's _default_ host sets neither ciphers nor
     * protocols: Tomcat's default cipher string would select CBC and DHE
     * suites, and its default protocols name TLS 1.0 and 1.1; tlsbridge's
     * secure defaults apply instead.
     */
    @ParameterizedTest(name = "Tomcat defaults refuse {0}")
    @Order(5)
    @ValueSource(strings = {"ECDHE-RSA-AES128-SHA", "ECDHE-RSA-AES256-SHA384", "ECDHE-ECDSA-AES128-SHA",
        "DHE-RSA-AES128-GCM-SHA256", "AES128-SHA", "AES256-GCM-SHA384"})
    void tomcatDefaultCiphersAreTlsbridgeDefaults(String ossl) throws Exception {
        Processes.Run no = Clients.sClient(pki, main, "localhost", "/info", "-tls1_2", "-cipher", ossl);
        assertNotEquals(0, no.exit, no.toString());
        assertFalse(no.out.contains("HTTP/1.1 200"), no.toString());
        assertTrue(no.out.contains("alert handshake failure"), no.toString());
    }

    @ParameterizedTest(name = "Tomcat default protocols refuse {0}")
    @Order(5)
    @ValueSource(strings = {"-tls1", "-tls1_1"})
    void tomcatDefaultProtocolsAreTls12AndUp(String flag) throws Exception {
        Processes.Run no = Clients.sClient(pki, main, "localhost", "/info", flag, "-cipher", "DEFAULT:@SECLEVEL=0");
        assertNotEquals(0, no.exit, no.toString());
        assertTrue(no.out.contains("alert protocol version"), no.toString());
    }

    /** CBC and static-RSA suites named in {@code ciphers} are served, and only those named. */
    @Test
    @Order(5)
    void cbcSuitesWhenNamed() throws Exception {
        for (String ossl : new String[] {"ECDHE-RSA-AES128-SHA", "AES128-SHA"}) {
            Processes.Run yes = Clients.sClient(pki, named, "localhost", "/info", "-tls1_2", "-cipher", ossl);
            assertEquals(0, yes.exit, yes.toString());
            assertTrue(yes.out.contains("Cipher is " + ossl), yes.toString());
            assertTrue(yes.out.contains("HTTP/1.1 200"), yes.toString());
        }
        Processes.Run no = Clients.sClient(pki, named, "localhost", "/info", "-tls1_2", "-cipher", "ECDHE-RSA-AES256-SHA");
        assertNotEquals(0, no.exit, no.toString());
    }

    @Test
    @Order(6)
    void requiredClientCertificateAccepted() throws Exception {
        Processes.Run r = Clients.curl(pki, "localhost", mtls, "/info", "--http1.1", "--cert", pki.path("client.pem"),
                "--key", pki.path("client.key"));
        assertEquals(0, r.exit, r.toString());
        assertEquals("CN=tlsbridge test client", field(r.out, "peer"), r.out);
        Processes.Run r12 = Clients.curl(pki, "localhost", mtls, "/info", "--http1.1", "--tlsv1.2", "--tls-max", "1.2",
                "--cert", pki.path("client.pem"), "--key", pki.path("client.key"));
        assertEquals(0, r12.exit, r12.toString());
        assertEquals("CN=tlsbridge test client", field(r12.out, "peer"), r12.out);
    }

    /** certificateVerification="optional", trust from a PEM caCertificateFile read by OpenSSL. */
    @Test
    @Order(6)
    void optionalClientCertificateWithPemCaFile() throws Exception {
        Processes.Run with = Clients.curl(pki, "other.example", main, "/info", "--http1.1", "--cert",
                pki.path("client.pem"), "--key", pki.path("client.key"));
        assertEquals(0, with.exit, with.toString());
        assertEquals("CN=tlsbridge test client", field(with.out, "peer"), with.out);
        Processes.Run without = Clients.curl(pki, "other.example", main, "/info", "--http1.1");
        assertEquals(0, without.exit, without.toString());
        assertEquals("none", field(without.out, "peer"), without.out);
        Processes.Run rogue = Clients.curl(pki, "other.example", main, "/info", "--http1.1", "--cert",
                pki.path("rogue.pem"), "--key", pki.path("rogue.key"));
        assertNotEquals(0, rogue.exit, rogue.toString());
    }

    @ParameterizedTest(name = "client certificate rejected: {0}")
    @Order(7)
    @ValueSource(strings = {"none", "untrusted"})
    void requiredClientCertificateRejected(String which) throws Exception {
        for (String tls : new String[] {"1.2", "1.3"}) {
            Processes.Run r = which.equals("none")
                    ? Clients.curl(pki, "localhost", mtls, "/info", "--http1.1", "--tlsv" + tls, "--tls-max", tls)
                    : Clients.curl(pki, "localhost", mtls, "/info", "--http1.1", "--tlsv" + tls, "--tls-max", tls,
                            "--cert", pki.path("rogue.pem"), "--key", pki.path("rogue.key"));
            assertNotEquals(0, r.exit, "TLS " + tls + ": " + r);
            assertFalse(r.out.contains("cipher_suite="), "TLS " + tls + ": " + r);
            assertTrue(r.out.matches("(?s).*(alert|certificate required|handshake failure|unknown ca|"
                    + "Connection reset|bad certificate).*"), "TLS " + tls + ": " + r);
        }
    }

    @Test
    @Order(8)
    void tomcatEnginesInheritTheHostsCiphers() throws Exception {
        // as Tomcat's endpoint makes each connection's engine: the host's list,
        // set once on the SSL_CTX, is not parsed again per connection
        for (SSLHostConfig h : new SSLHostConfig[] {namedHost, mtlsHost}) {
            for (org.apache.tomcat.util.net.SSLHostConfigCertificate c : h.getCertificates()) {
                javax.net.ssl.SSLEngine e = c.getSslContext().createSSLEngine();
                e.setUseClientMode(false);
                e.setEnabledCipherSuites(h.getEnabledCiphers());
                e.setEnabledProtocols(h.getEnabledProtocols());
                e.beginHandshake();
                assertFalse(HeldCiphersTest.ownCiphers(e), h.getCiphers());
                assertEquals(List.of(h.getEnabledCiphers()), List.of(e.getEnabledCipherSuites()));
                e.closeOutbound();
            }
        }
    }

    @Test
    @Order(8)
    void honorCipherOrder() throws Exception {
        String clientOrder = "ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384";
        Processes.Run server = Clients.sClient(pki, mtls, "localhost", "/info", "-tls1_2", "-cipher", clientOrder,
                "-cert", pki.path("client.pem"), "-key", pki.path("client.key"));
        assertEquals(0, server.exit, server.toString());
        assertTrue(server.out.contains("Cipher is ECDHE-RSA-AES256-GCM-SHA384"), server.toString());
        // the main connector keeps Tomcat's default (honorCipherOrder=false): the client's order wins
        Processes.Run client = Clients.sClient(pki, main, "localhost", "/info", "-tls1_2", "-cipher", clientOrder);
        assertEquals(0, client.exit, client.toString());
        assertTrue(client.out.contains("Cipher is ECDHE-RSA-AES128-GCM-SHA256"), client.toString());
    }

    @Test
    @Order(9)
    void disableSessionTickets() throws Exception {
        Processes.Run with = Clients.sClient(pki, main, "localhost", "/info", "-tls1_2");
        assertEquals(0, with.exit, with.toString());
        assertTrue(with.out.contains("TLS session ticket lifetime hint"), with.toString());
        Processes.Run without = Clients.sClient(pki, mtls, "localhost", "/info", "-tls1_2", "-cert",
                pki.path("client.pem"), "-key", pki.path("client.key"));
        assertEquals(0, without.exit, without.toString());
        assertTrue(without.out.contains("HTTP/1.1 200"), without.toString());
        assertFalse(without.out.contains("TLS session ticket"), without.toString());
    }

    @Test
    @Order(10)
    void http2ThroughAlpn() throws Exception {
        if (!AlpnProbe.engineNegotiatesAlpn()) {
            String msg = "NOT RUN: curl --http2 against Tomcat: the tlsbridge engine does not negotiate ALPN yet "
                    + "(issue 7); HTTP/2 over TLS needs it. This test runs by itself once ALPN lands.";
            System.err.println("\n*** " + msg + " ***\n");
            Assumptions.abort(msg);
        }
        Processes.Run r = Clients.curl(pki, "localhost", main, "/info", "--http2");
        assertEquals(0, r.exit, r.toString());
        assertTrue(r.out.contains("ALPN: server accepted h2") || r.out.contains("ALPN, server accepted to use h2"),
                r.toString());
        assertEquals("HTTP/2.0", field(r.out, "protocol"), r.out);
    }

    @ParameterizedTest(name = "100 MiB up and down, {0} buffers")
    @Order(11)
    @ValueSource(strings = {"heap", "direct"})
    void bigTransfers(String buffers) throws Exception {
        int port = buffers.equals("heap") ? main : direct;
        Processes.Run up = Clients.curl(pki, "localhost", port, "/upload", "--http1.1", "--data-binary",
                "@" + big, "-H", "Content-Type: application/octet-stream");
        assertEquals(0, up.exit, up.toString());
        assertTrue(up.out.contains("sha256=" + bigSha + " bytes=" + BIG), up.out);
        Path got = Files.createTempFile("tlsbridge-down", ".bin");
        try {
            Processes.Run down = Clients.curl(pki, "localhost", port, "/download", "--http1.1", "-o", got.toString());
            assertEquals(0, down.exit, down.toString());
            assertEquals(BIG, Files.size(got));
            MessageDigest md = TestServlets.sha256();
            try (java.io.InputStream in = Files.newInputStream(got)) {
                byte[] buf = new byte[1 << 20];
                int n;
                while ((n = in.read(buf)) > 0) {
                    md.update(buf, 0, n);
                }
            }
            assertEquals(bigSha, HexFormat.of().formatHex(md.digest()));
            System.out.println("100 MiB " + buffers + " buffers: upload and download SHA-256 " + bigSha);
        } finally {
            Files.deleteIfExists(got);
        }
    }

    @Test
    @Order(100)
    void tomcatLoggedNoWarningsOrErrors() {
        List<String> problems = tc.problems();
        // Tomcat's own syntax check calls disableSessionTickets an OpenSSL-only attribute; tlsbridge honours it.
        problems.removeIf(p -> p.contains("[disableSessionTickets]") && p.contains("SSLHostConfig"));
        problems.removeIf(p -> p.contains("[caCertificateFile]") && p.contains("SSLHostConfig"));
        // Tomcat's note that "optional" cannot ask for a certificate after a TLS 1.3 handshake (true here too)
        problems.removeIf(p -> p.contains("post handshake authentication (PHA)"));
        // the groups host names X25519MLKEM768, which OpenSSL 3.0 lacks: said once, at start
        long pq = problems.stream().filter(p -> p.contains("groups [X25519MLKEM768] are not available in OpenSSL 3.0"))
                .count();
        assertEquals(TlsBridgeProvider.openSslVersion().startsWith("OpenSSL 3.0") ? 1 : 0, pq, problems.toString());
        problems.removeIf(p -> p.contains("groups [X25519MLKEM768] are not available in OpenSSL 3.0"));
        assertTrue(problems.isEmpty(), "Tomcat logged: " + String.join("\n", problems));
    }
}
