package org.tlsbridge.tomcat;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import org.apache.tomcat.util.net.SSLHostConfig;

/**
 * What differs between the Tomcat lines these classes run on (compiled
 * against 10.1): Tomcat 11 keeps TLS 1.3 suites in their own attribute,
 * {@code cipherSuites}; {@code groups} exists from 10.1.49. Only public
 * Tomcat API is looked up.
 */
final class TomcatVersions {
    private static final MethodHandle CIPHER_SUITES = find("getCipherSuites");
    /** {@code groups} (10.1.49+, 11.0.11+); its default is jdk.tls.namedGroups. */
    private static final MethodHandle GROUPS = find("getGroups");

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
        return get(CIPHER_SUITES, h, "getCipherSuites");
    }

    /** The host's {@code groups} attribute (comma-separated JSSE names), or null when unset or unknown to this Tomcat. */
    static String groups(SSLHostConfig h) {
        return get(GROUPS, h, "getGroups");
    }

    /** A String getter that only some Tomcat versions have: null where absent. */
    private static String get(MethodHandle getter, SSLHostConfig h, String name) {
        if (getter == null) {
            return null;
        }
        try {
            return (String) getter.invoke(h);
        } catch (Throwable t) {
            throw new IllegalStateException("SSLHostConfig." + name + " failed", t);
        }
    }

    /** Tomcat's default cipher string of the running version (not the compile-time constant). */
    static String defaultCiphers() {
        String v = constant("DEFAULT_TLS_CIPHERS");
        return v != null ? v : SSLHostConfig.DEFAULT_TLS_CIPHERS;
    }

    /**
     * Whether {@code ciphers} is what Tomcat holds when the attribute is not
     * set (10.1: DEFAULT_TLS_CIPHERS; 11: DEFAULT_TLS_CIPHERS_12, the same
     * string). Tomcat itself tells "not configured" this way.
     */
    static boolean isDefaultCiphers(String ciphers) {
        return ciphers == null || ciphers.equals(defaultCiphers()) || ciphers.equals(constant("DEFAULT_TLS_CIPHERS_12"));
    }

    /** Whether Tomcat 11's {@code cipherSuites} (TLS 1.3) is unset: its default, blank, or absent (10.1). */
    static boolean isDefaultCipherSuites(String cipherSuites) {
        return cipherSuites == null || cipherSuites.isBlank() || cipherSuites.equals(constant("DEFAULT_TLS_CIPHERS_13"));
    }

    /** A public String constant of the running Tomcat's SSLHostConfig, or null. */
    private static String constant(String name) {
        try {
            return (String) SSLHostConfig.class.getField(name).get(null);
        } catch (ReflectiveOperationException | ClassCastException e) {
            return null;
        }
    }
}
