package org.tlsbridge.tomcat;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import java.util.List;
import javax.net.ssl.SSLException;
import org.junit.jupiter.api.Test;

/** The ciphers attribute and PEM files as OpenSSL resolves them, including what must be refused. */
class ConfigResolutionTest {
    private static final String[] CORE = {"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384",
        "TLS_CHACHA20_POLY1305_SHA256", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
        "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"};

    @Test
    void tomcatsDefaultString() throws Exception {
        List<String> got = Arrays.asList(CipherConfig.resolve("HIGH:!aNULL:!eNULL:!EXPORT:!DES:!RC4:!MD5:!kRSA").enabled);
        assertTrue(got.containsAll(Arrays.asList(CORE)), got.toString());
        assertFalse(got.contains("TLS_RSA_WITH_AES_128_GCM_SHA256"), "kRSA excluded: " + got);
        assertTrue(got.get(0).startsWith("TLS_AES_") || got.get(0).startsWith("TLS_CHACHA20"), "TLS 1.3 first");
    }

    @Test
    void openSslNamesKeepTheirOrderAndTls13Defaults() throws Exception {
        String[] got = CipherConfig.resolve("ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-AES128-GCM-SHA256").enabled;
        assertEquals("TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", got[got.length - 2]);
        assertEquals("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", got[got.length - 1]);
        assertEquals(5, got.length, Arrays.toString(got));
    }

    @Test
    void javaNamesAndTls13NamesSelectExactly() throws Exception {
        CipherConfig.Result r = CipherConfig.resolve(
                "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, TLS_AES_128_GCM_SHA256,TLS_NO_SUCH_SUITE_SHA256");
        assertArrayEquals(new String[] {"TLS_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"}, r.enabled);
        assertEquals(List.of("TLS_NO_SUCH_SUITE_SHA256"), r.skipped);
    }

    @Test
    void aliasesExclusionsAndStrength() throws Exception {
        String[] got = CipherConfig.resolve("ECDHE+AESGCM:!ECDSA:@STRENGTH").enabled;
        List<String> l = Arrays.asList(got);
        assertTrue(l.contains("TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"));
        assertTrue(l.stream().noneMatch(n -> n.contains("ECDSA")), l.toString());
        assertTrue(l.indexOf("TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384")
                < l.indexOf("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"), l.toString());
    }

    @Test
    void stringSelectingNothingIsRefusedWithOpenSslsReason() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CipherConfig.resolve("NO-SUCH-CIPHER"));
        assertTrue(e.getMessage().contains("selects no suite") && e.getMessage().contains("no cipher match"),
                e.getMessage());
    }

    @Test
    void pemKeysInEveryShapeOpenSslReads() throws Exception {
        TomcatPki t = TomcatPki.get();
        KeyStore rsa = t.pki.keyStore("rsa");
        byte[] want = rsa.getKey("rsa", "changeit".toCharArray()).getEncoded();
        PrivateKey legacy = PemFiles.privateKey("certificateKeyFile", t.path("rsa-legacy.key"),
                TomcatPki.RSA_KEY_PASSWORD, "certificateKeyPassword");
        assertArrayEquals(want, legacy.getEncoded(), "legacy encrypted PEM");
        assertArrayEquals(want, PemFiles.privateKey("certificateKeyFile", t.path("rsa.key"), null, null).getEncoded(),
                "plain PKCS#8 PEM");
        PrivateKey ec = PemFiles.privateKey("certificateKeyFile", t.path("ec-enc.key"), TomcatPki.EC_KEY_PASSWORD,
                "certificateKeyPassword");
        assertEquals("EC", ec.getAlgorithm());
        // certificateFile holding certificate and key together (no certificateKeyFile)
        Path both = Files.createTempFile("tlsbridge-both", ".pem");
        try {
            Files.write(both, concat(Files.readAllBytes(t.pki.file("rsa.pem")), Files.readAllBytes(t.pki.file("rsa.key"))));
            assertArrayEquals(want,
                    PemFiles.privateKey("certificateFile", both.toString(), null, null).getEncoded());
            List<X509Certificate> certs = PemFiles.certificates("certificateFile", both.toString());
            assertEquals(1, certs.size());
            assertEquals("CN=localhost", certs.get(0).getSubjectX500Principal().getName());
        } finally {
            Files.delete(both);
        }
    }

    @Test
    void pemFailuresAreClearExceptions() throws Exception {
        TomcatPki t = TomcatPki.get();
        SSLException wrong = assertThrows(SSLException.class, () -> PemFiles.privateKey("certificateKeyFile",
                t.path("ec-enc.key"), "not-the-password", "certificateKeyPassword"));
        assertTrue(wrong.getMessage().contains("(wrong certificateKeyPassword?)"), wrong.getMessage());
        SSLException none = assertThrows(SSLException.class, () -> PemFiles.privateKey("certificateKeyFile",
                t.path("ec-enc.key"), null, "certificateKeyPassword"));
        assertTrue(none.getMessage().contains("certificateKeyPassword is not set"), none.getMessage());
        IOException missing = assertThrows(IOException.class,
                () -> PemFiles.certificates("caCertificateFile", t.path("ca.pem") + ".missing"));
        assertTrue(missing.getMessage().startsWith("caCertificateFile [" + t.path("ca.pem") + ".missing]: "),
                missing.getMessage());
        SSLException noCert = assertThrows(SSLException.class,
                () -> PemFiles.certificates("certificateFile", t.path("rsa.key")));
        assertEquals("certificateFile [" + t.path("rsa.key") + "]: no certificate found", noCert.getMessage());
        SSLException noKey = assertThrows(SSLException.class,
                () -> PemFiles.privateKey("certificateFile", t.path("ca.pem"), null, null));
        assertTrue(noKey.getMessage().startsWith("certificateFile [" + t.path("ca.pem")
                + "]: no private key OpenSSL can read"), noKey.getMessage());
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
