package org.tlsbridge.context;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.security.KeyManagementException;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.tlsbridge.test.TestPki;

/**
 * The Default context's key store, from the javax.net.ssl.keyStore* system
 * properties: a wrong password or a file that is no key store fails with a
 * message naming the file and the properties as the user wrote them.
 */
class DefaultKeyStoreTest {
    private static final String[] KEYS = {"javax.net.ssl.keyStore", "javax.net.ssl.keyStorePassword",
        "javax.net.ssl.keyStoreType"};

    private static String failure(String store, String password, String type) {
        Map<String, String> before = new HashMap<>();
        for (String k : KEYS) {
            before.put(k, System.getProperty(k));
        }
        try {
            System.setProperty(KEYS[0], store);
            System.setProperty(KEYS[1], password);
            System.setProperty(KEYS[2], type);
            return assertThrows(KeyManagementException.class, Managers::defaultKeyManagers).getMessage();
        } finally {
            for (String k : KEYS) {
                if (before.get(k) == null) {
                    System.clearProperty(k);
                } else {
                    System.setProperty(k, before.get(k));
                }
            }
        }
    }

    @Test
    void wrongPasswordNamesTheStoreAndTheSetting() {
        String store = TestPki.get().file("rsa.p12").toString();
        String msg = failure(store, "not-the-password", "PKCS12");
        assertTrue(msg.startsWith("cannot load the default key store -Djavax.net.ssl.keyStore=" + store
                + " (type PKCS12, with -Djavax.net.ssl.keyStorePassword): "), msg);
        assertTrue(msg.contains("password"), msg);
        assertEquals(-1, msg.indexOf("java.io.IOException"), msg);
    }

    @Test
    void notAKeyStoreNamesTheFile() {
        String file = TestPki.get().file("ca.pem").toString();
        String msg = failure(file, "changeit", "PKCS12");
        assertTrue(msg.startsWith("cannot load the default key store -Djavax.net.ssl.keyStore=" + file + " "), msg);
    }
}
