package org.tlsbridge.test;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;

/**
 * A throw-away PKI made with the openssl command line once per test JVM: a
 * CA, RSA-2048 / P-256 / P-384 / Ed25519 / Ed448 server certificates for
 * localhost and 127.0.0.1, one for another host name, and client
 * certificates (RSA, Ed25519, Ed448); the EdDSA ones are issued by an
 * Ed25519 CA (edca.pem; cas.pem holds both CAs). PEM files
 * feed openssl s_server/curl; PKCS#12 files feed Java key managers.
 */
public final class TestPki {
    public static final char[] PASSWORD = "changeit".toCharArray();
    private static TestPki instance;

    public final Path dir;

    private TestPki(Path dir) {
        this.dir = dir;
    }

    public static synchronized TestPki get() {
        if (instance == null) {
            try {
                Path d = Files.createTempDirectory("tlsbridge-pki");
                TestPki p = new TestPki(d);
                p.make();
                instance = p;
            } catch (IOException e) {
                throw new IllegalStateException("cannot create the test PKI with openssl: " + e, e);
            }
        }
        return instance;
    }

    public static void run(Path dir, String... cmd) throws IOException {
        ProcessBuilder pb = Processes.builder(cmd).directory(dir.toFile()).redirectErrorStream(true);
        Process p = pb.start();
        byte[] out;
        try (InputStream in = p.getInputStream()) {
            out = in.readAllBytes();
        }
        try {
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IOException(String.join(" ", cmd) + " failed: " + new String(out, StandardCharsets.UTF_8));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }

    private void make() throws IOException {
        run(dir, "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem",
                "-days", "30", "-subj", "/CN=tlsbridge test CA", "-addext", "basicConstraints=critical,CA:TRUE",
                "-addext", "keyUsage=critical,keyCertSign,cRLSign");
        leaf("rsa", "rsa:2048", null, "localhost", "DNS:localhost,IP:127.0.0.1,IP:::1", "serverAuth");
        leaf("ec", "ec", "P-256", "localhost", "DNS:localhost,IP:127.0.0.1,IP:::1", "serverAuth");
        leaf("ec384", "ec", "P-384", "localhost", "DNS:localhost,IP:127.0.0.1,IP:::1", "serverAuth");
        leaf("other", "rsa:2048", null, "other.example", "DNS:other.example", "serverAuth");
        leaf("client", "rsa:2048", null, "tlsbridge test client", null, "clientAuth");
        // EdDSA leaves chain to an Ed25519 CA: a client whose signature_algorithms
        // name only EdDSA (s_client -sigalgs ed25519) accepts no RSA-signed chain.
        run(dir, "openssl", "req", "-x509", "-newkey", "ED25519", "-nodes", "-keyout", "edca.key", "-out",
                "edca.pem", "-days", "30", "-subj", "/CN=tlsbridge test EdDSA CA", "-addext",
                "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign");
        Files.writeString(dir.resolve("cas.pem"), Files.readString(dir.resolve("ca.pem"))
                + Files.readString(dir.resolve("edca.pem")));
        for (String ed : new String[] {"ed25519", "ed448"}) {
            leaf(ed, ed.toUpperCase(java.util.Locale.ROOT), null, "localhost", "DNS:localhost,IP:127.0.0.1,IP:::1",
                    "serverAuth");
            leaf("client-" + ed, ed.toUpperCase(java.util.Locale.ROOT), null, "tlsbridge test client " + ed, null,
                    "clientAuth");
        }
        run(dir, "keytool", "-importcert", "-noprompt", "-alias", "ca", "-file", "ca.pem", "-keystore",
                "trust.p12", "-storetype", "PKCS12", "-storepass", new String(PASSWORD));
        run(dir, "keytool", "-importcert", "-noprompt", "-alias", "edca", "-file", "edca.pem", "-keystore",
                "trust.p12", "-storetype", "PKCS12", "-storepass", new String(PASSWORD));
    }

    private void leaf(String name, String alg, String curve, String cn, String san, String eku) throws IOException {
        List<String> key = new ArrayList<>(Arrays.asList("openssl", "genpkey", "-out", name + ".key"));
        if (alg.startsWith("ED")) {
            key.addAll(Arrays.asList("-algorithm", alg));
        } else if (curve != null) {
            key.addAll(Arrays.asList("-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:" + curve));
        } else {
            key.addAll(Arrays.asList("-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"));
        }
        run(dir, key.toArray(new String[0]));
        run(dir, "openssl", "req", "-new", "-key", name + ".key", "-out", name + ".csr", "-subj", "/CN=" + cn);
        StringBuilder ext = new StringBuilder("basicConstraints=CA:FALSE\nextendedKeyUsage=" + eku + "\n");
        if (san != null) {
            ext.append("subjectAltName=").append(san).append('\n');
        }
        Files.writeString(dir.resolve(name + ".ext"), ext.toString());
        String ca = alg.startsWith("ED") ? "edca" : "ca";
        run(dir, "openssl", "x509", "-req", "-in", name + ".csr", "-CA", ca + ".pem", "-CAkey", ca + ".key",
                "-CAcreateserial", "-days", "30", "-extfile", name + ".ext", "-out", name + ".pem");
        run(dir, "openssl", "pkcs12", "-export", "-inkey", name + ".key", "-in", name + ".pem", "-certfile", ca + ".pem",
                "-name", name, "-passout", "pass:" + new String(PASSWORD), "-out", name + ".p12");
    }

    public Path file(String name) {
        return dir.resolve(name);
    }

    public KeyStore keyStore(String name) {
        try (InputStream in = Files.newInputStream(dir.resolve(name + ".p12"))) {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(in, PASSWORD);
            return ks;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** Key managers holding the named identities (e.g. "rsa", "ec"), one alias each. */
    public KeyManager[] keyManagers(String... names) {
        try {
            KeyStore all = KeyStore.getInstance("PKCS12");
            all.load(null, null);
            for (String n : names) {
                KeyStore ks = keyStore(n);
                all.setKeyEntry(n, ks.getKey(n, PASSWORD), PASSWORD, ks.getCertificateChain(n));
            }
            KeyManagerFactory f = KeyManagerFactory.getInstance("NewSunX509");
            f.init(all, PASSWORD);
            return f.getKeyManagers();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    public TrustManager[] trustManagers() {
        try {
            TrustManagerFactory f = TrustManagerFactory.getInstance("PKIX");
            f.init(keyStore("trust"));
            return f.getTrustManagers();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
