package org.tlsbridge.tomcat;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import org.apache.tomcat.util.net.SSLHostConfig;

/**
 * What differs between the Tomcat lines these classes run on (compiled
 * against 10.1): Tomcat 11 keeps TLS 1.3 suites in their own attribute,
 * {@code cipherSuites}. Only public Tomcat API is looked up.
 */
final class TomcatVersions {
    private static final MethodHandle CIPHER_SUITES = find("getCipherSuites");

    private TomcatVersions() {
    }

    private static MethodHandle find(String name) {
        try {
            return MethodHandles.publicLookup().findVirtual(SSLHostConfig.class, name,
                    MethodType.methodType(String.class));
        } catch (NoSuchMethodException | IllegalAccessException e) {
            return null;
        }
    }

    /** Tomcat 11's TLS 1.3 suite list, or null on Tomcat 10.1. */
    static String tls13CipherSuites(SSLHostConfig h) {
        if (CIPHER_SUITES == null) {
            return null;
        }
        try {
            return (String) CIPHER_SUITES.invoke(h);
        } catch (Throwable t) {
            throw new IllegalStateException("SSLHostConfig.getCipherSuites failed", t);
        }
    }

    /** Tomcat's default cipher string of the running version (not the compile-time constant). */
    static String defaultCiphers() {
        try {
            return (String) SSLHostConfig.class.getField("DEFAULT_TLS_CIPHERS").get(null);
        } catch (ReflectiveOperationException e) {
            return SSLHostConfig.DEFAULT_TLS_CIPHERS;
        }
    }
}
