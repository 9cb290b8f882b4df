package org.tlsbridge.tomcat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import javax.net.ssl.SSLException;
import org.apache.tomcat.util.net.SSLHostConfig;
import org.apache.tomcat.util.net.SSLHostConfigCertificate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A key file tlsbridge cannot use fails the connector with an exception that
 * names the file as the user wrote it and the setting that holds it, says
 * which password setting is suspect, and gives each of OpenSSL's reasons
 * once (OpenSSL 3 queues a wrong password's reasons once per key structure
 * its decoders try). Driven through TlsBridgeUtil, as Tomcat does.
 */
class KeyFileErrorsTest {
    private static TomcatPki pki;
    private static Path work;

    @BeforeAll
    static void files() throws IOException {
        pki = TomcatPki.get();
        work = Files.createTempDirectory(Paths.get(System.getProperty("user.dir")), "tlsbridge-keyfiles");
        byte[] key = Files.readAllBytes(pki.pki.file("rsa.key"));
        Files.write(work.resolve("truncated.key"), Arrays.copyOf(key, key.length / 2));
        byte[] garbage = new byte[700];
        new java.util.Random(7).nextBytes(garbage);
        Files.write(work.resolve("garbage.key"), garbage);
        Files.writeString(work.resolve("wrong-password.txt"), "not-the-password\n");
    }

    @AfterAll
    static void clean() throws IOException {
        try (var s = Files.list(work)) {
            for (Path p : (Iterable<Path>) s::iterator) {
                Files.delete(p);
            }
        }
        Files.delete(work);
    }

    /** Tomcat resolves a relative location against the working directory here, as the user wrote it. */
    private static String relative(Path p) {
        return Paths.get(System.getProperty("user.dir")).relativize(p).toString();
    }

    private static Exception fails(String keyFile, String password, String passwordFile) {
        SSLHostConfig h = EmbeddedTomcat.host("_default_");
        SSLHostConfigCertificate c = EmbeddedTomcat.pem(h, SSLHostConfigCertificate.Type.UNDEFINED, keyFile,
                pki.path("rsa.pem"), null, password);
        if (passwordFile != null) {
            c.setCertificateKeyPasswordFile(passwordFile);
        }
        return assertThrows(IOException.class, () -> new TlsBridgeUtil(c).getKeyManagers());
    }

    /** msg is prefix then OpenSSL's reasons, "; "-separated, none given twice. */
    private static void reasonsOnce(String msg, String prefix) {
        assertTrue(msg.startsWith(prefix), "want [" + prefix + "...], got: " + msg);
        List<String> reasons = Arrays.asList(msg.substring(prefix.length()).split("; "));
        assertFalse(reasons.get(0).isEmpty(), msg);
        assertEquals(reasons.size(), new HashSet<>(reasons).size(), "a reason given twice: " + msg);
    }

    @Test
    void wrongCertificateKeyPassword() {
        String key = relative(pki.pki.file("ec-enc.key"));
        Exception e = fails(key, "not-the-password", null);
        assertEquals(SSLException.class, e.getClass(), e.toString());
        reasonsOnce(e.getMessage(), "certificateKeyFile [" + key
                + "]: cannot decrypt the private key (wrong certificateKeyPassword?): ");
        assertTrue(e.getMessage().contains("bad decrypt"), e.getMessage());
    }

    @Test
    void wrongPasswordFromCertificateKeyPasswordFile() {
        String key = relative(pki.pki.file("rsa-legacy.key"));
        String pw = relative(work.resolve("wrong-password.txt"));
        Exception e = fails(key, null, pw);
        assertEquals(SSLException.class, e.getClass(), e.toString());
        reasonsOnce(e.getMessage(), "certificateKeyFile [" + key
                + "]: cannot decrypt the private key (wrong certificateKeyPasswordFile [" + pw + "]?): ");
    }

    @Test
    void encryptedKeyWithoutPassword() {
        String key = relative(pki.pki.file("ec-enc.key"));
        Exception e = fails(key, null, null);
        assertEquals(SSLException.class, e.getClass(), e.toString());
        reasonsOnce(e.getMessage(), "certificateKeyFile [" + key
                + "]: the private key is encrypted and certificateKeyPassword is not set: ");
    }

    @Test
    void keyFilesThatHoldNoKey() {
        for (String name : new String[] {"truncated.key", "garbage.key"}) {
            String key = relative(work.resolve(name));
            Exception e = fails(key, null, null);
            assertEquals(SSLException.class, e.getClass(), e.toString());
            reasonsOnce(e.getMessage(), "certificateKeyFile [" + key + "]: no private key OpenSSL can read");
        }
        // a certificate where the key belongs, with a password set: not a password problem
        String cert = relative(pki.pki.file("ca.pem"));
        Exception e = fails(cert, "some-password", null);
        assertEquals(SSLException.class, e.getClass(), e.toString());
        assertTrue(e.getMessage().startsWith("certificateKeyFile [" + cert + "]: no private key OpenSSL can read"),
                e.getMessage());
    }

    @Test
    void missingKeyFile() {
        String key = relative(work.resolve("absent.key"));
        Exception e = fails(key, null, null);
        assertTrue(e.getMessage().startsWith("certificateKeyFile [" + key + "]: "), e.toString());
        assertTrue(e instanceof FileNotFoundException || !(e instanceof SSLException), e.toString());
    }

    @Test
    void certificateFileWithoutCertificate() {
        SSLHostConfig h = EmbeddedTomcat.host("_default_");
        String cert = relative(pki.pki.file("rsa.key"));
        SSLHostConfigCertificate c = EmbeddedTomcat.pem(h, SSLHostConfigCertificate.Type.UNDEFINED,
                pki.path("rsa.key"), cert, null, null);
        SSLException e = assertThrows(SSLException.class, () -> new TlsBridgeUtil(c).getKeyManagers());
        assertEquals("certificateFile [" + cert + "]: no certificate found", e.getMessage());
    }

    @Test
    void badSessionTicketKeyFileNamesTheOpenSslConfCmd() throws Exception {
        Path keys = work.resolve("ticket.keys");
        Files.write(keys, new byte[12]);
        Files.setPosixFilePermissions(keys, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        TlsBridgeSSLContext ctx = new TlsBridgeSSLContext("TLS", 0, keys.toString(), null, null);
        java.security.KeyManagementException e = assertThrows(java.security.KeyManagementException.class,
                () -> ctx.init(pki.pki.keyManagers("rsa"), pki.pki.trustManagers(), null));
        assertTrue(e.getMessage().startsWith("<OpenSSLConfCmd name=\"tlsbridge.ticketKeys\">: session ticket key file "
                + keys + " is 12 bytes"), e.getMessage());
    }

    @Test
    void theRightPasswordFromCertificateKeyPasswordFileWorks() throws Exception {
        // the right password through certificateKeyPasswordFile works (the wrong one above fails)
        Path pw = work.resolve("right-password.txt");
        Files.write(pw, (TomcatPki.RSA_KEY_PASSWORD + "\n").getBytes(StandardCharsets.UTF_8));
        SSLHostConfig h = EmbeddedTomcat.host("_default_");
        SSLHostConfigCertificate c = EmbeddedTomcat.pem(h, SSLHostConfigCertificate.Type.UNDEFINED,
                pki.path("rsa-legacy.key"), pki.path("rsa.pem"), null, null);
        c.setCertificateKeyPasswordFile(pw.toString());
        assertEquals(1, new TlsBridgeUtil(c).getKeyManagers().length);
    }
}
