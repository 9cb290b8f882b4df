package org.tlsbridge.tomcat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.tlsbridge.test.TestPki;

/**
 * The shared test PKI plus the file shapes Tomcat users have: an encrypted
 * PKCS#8 key, a legacy encrypted RSA key, a JKS store, and a client
 * certificate from a CA nobody trusts.
 */
final class TomcatPki {
    static final String EC_KEY_PASSWORD = "pem-secret";
    static final String RSA_KEY_PASSWORD = "legacy-secret";
    private static TomcatPki instance;

    final TestPki pki;

    private TomcatPki(TestPki pki) {
        this.pki = pki;
    }

    static synchronized TomcatPki get() throws IOException {
        if (instance == null) {
            TestPki p = TestPki.get();
            Path d = p.dir;
            if (!Files.exists(d.resolve("rogue.pem"))) {
                TestPki.run(d, "openssl", "pkcs8", "-topk8", "-in", "ec.key", "-out", "ec-enc.key", "-v2",
                        "aes-256-cbc", "-passout", "pass:" + EC_KEY_PASSWORD);
                TestPki.run(d, "openssl", "rsa", "-in", "rsa.key", "-aes256", "-traditional", "-passout",
                        "pass:" + RSA_KEY_PASSWORD, "-out", "rsa-legacy.key");
                TestPki.run(d, "keytool", "-importkeystore", "-noprompt", "-srckeystore", "other.p12",
                        "-srcstoretype", "PKCS12", "-srcstorepass", "changeit", "-destkeystore", "other.jks",
                        "-deststoretype", "JKS", "-deststorepass", "changeit", "-destkeypass", "changeit");
                TestPki.run(d, "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "rogue.key",
                        "-out", "rogue.pem", "-days", "2", "-subj", "/CN=rogue client");
            }
            instance = new TomcatPki(p);
        }
        return instance;
    }

    String path(String name) {
        return pki.file(name).toString();
    }
}
