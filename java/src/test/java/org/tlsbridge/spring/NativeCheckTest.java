package org.tlsbridge.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

/**
 * tlsbridge.openssl as a Spring property reaches the library as the system
 * property it reads when it loads; an explicit -Dtlsbridge.openssl wins. (The
 * library of this JVM is loaded already, so what is checked is the hand-over,
 * not a second load; tests/spring runs a whole application.)
 */
class NativeCheckTest {
    private static StandardEnvironment env(String openssl) {
        StandardEnvironment e = new StandardEnvironment();
        e.getPropertySources().addFirst(new MapPropertySource("test", Map.of(NativeCheck.OPENSSL, openssl)));
        return e;
    }

    @Test
    void springPropertyBecomesTheSystemProperty() {
        String before = System.getProperty(NativeCheck.OPENSSL);
        System.clearProperty(NativeCheck.OPENSSL);
        try {
            assertTrue(new NativeCheck(env("bundled")).usable());
            assertEquals("bundled", System.getProperty(NativeCheck.OPENSSL));
            System.setProperty(NativeCheck.OPENSSL, "system");
            new NativeCheck(env("bundled")).usable();
            assertEquals("system", System.getProperty(NativeCheck.OPENSSL), "an explicit -D wins");
        } finally {
            if (before == null) {
                System.clearProperty(NativeCheck.OPENSSL);
            } else {
                System.setProperty(NativeCheck.OPENSSL, before);
            }
        }
    }
}
