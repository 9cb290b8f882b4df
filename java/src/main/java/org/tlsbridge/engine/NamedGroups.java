package org.tlsbridge.engine;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import javax.net.ssl.SSLParameters;
import org.tlsbridge.internal.Native;

/**
 * Key-exchange groups by their JSSE names (x25519, secp256r1,
 * X25519MLKEM768, ...), from SSLParameters.getNamedGroups on JDK 20+, a
 * context's own default (Tomcat's {@code groups}) or the jdk.tls.namedGroups
 * property, translated to OpenSSL's group list; and OpenSSL's name of a
 * negotiated group back to the JSSE one.
 *
 * <p>Unknown names, and known ones this OpenSSL lacks (the ML-KEM groups
 * before OpenSSL 3.5), are left out, as SSLParameters' javadoc asks and
 * SunJSSE does; a list left with nothing is an error (see {@link #toOpenSsl}).
 */
public final class NamedGroups {
    /** SSLParameters.getNamedGroups is public API from JDK 20; looked up, not linked, to run on 17. */
    private static final MethodHandle GET_NAMED_GROUPS = find("getNamedGroups");
    private static final MethodHandle SET_NAMED_GROUPS = find("setNamedGroups");

    /** JSSE's spelling (SunJSSE's, IANA's for the ML-KEM groups), then the name OpenSSL's group lists take. */
    private static final String[][] KNOWN = {
        {"X25519MLKEM768", "X25519MLKEM768"},
        {"SecP256r1MLKEM768", "SecP256r1MLKEM768"},
        {"SecP384r1MLKEM1024", "SecP384r1MLKEM1024"},
        {"MLKEM512", "MLKEM512"},
        {"MLKEM768", "MLKEM768"},
        {"MLKEM1024", "MLKEM1024"},
        {"x25519", "X25519"},
        {"x448", "X448"},
        {"secp256r1", "P-256"},
        {"secp384r1", "P-384"},
        {"secp521r1", "P-521"},
        {"ffdhe2048", "ffdhe2048"},
        {"ffdhe3072", "ffdhe3072"},
        {"ffdhe4096", "ffdhe4096"},
        {"ffdhe6144", "ffdhe6144"},
        {"ffdhe8192", "ffdhe8192"},
    };

    private static volatile Set<String> supported;
    private static volatile String checkedProperty;

    private NamedGroups() {
    }

    private static MethodHandle find(String name) {
        try {
            MethodType t = name.startsWith("get") ? MethodType.methodType(String[].class)
                    : MethodType.methodType(void.class, String[].class);
            return MethodHandles.publicLookup().findVirtual(SSLParameters.class, name, t);
        } catch (ReflectiveOperationException e) {
            return null;
        }
    }

    static String[] from(SSLParameters p) {
        if (GET_NAMED_GROUPS == null) {
            return null;
        }
        try {
            return (String[]) GET_NAMED_GROUPS.invoke(p);
        } catch (Throwable t) {
            return null;
        }
    }

    public static void into(SSLParameters p, String[] groups) {
        if (SET_NAMED_GROUPS == null || groups == null) {
            return;
        }
        try {
            SET_NAMED_GROUPS.invoke(p, (Object) groups.clone());
        } catch (Throwable t) {
            // older JDK: nothing to report through SSLParameters
        }
    }

    /**
     * The process-wide list from jdk.tls.namedGroups, or null when unset. As
     * in SunJSSE, unknown names are skipped and a list naming no group this
     * OpenSSL has is an IllegalArgumentException (SunJSSE throws it when its
     * first engine is made; so does this, through {@link #checkProperty}).
     */
    static String[] fromProperty() {
        String v = System.getProperty("jdk.tls.namedGroups");
        if (v == null || v.isBlank()) {
            return null;
        }
        String t = v.trim();
        if (t.length() > 1 && t.startsWith("\"") && t.endsWith("\"")) {
            t = t.substring(1, t.length() - 1);
        }
        return t.split("\\s*,\\s*");
    }

    /** Fails an engine or socket made while jdk.tls.namedGroups names nothing usable. */
    static void checkProperty() {
        String v = System.getProperty("jdk.tls.namedGroups");
        if (v == null || v.equals(checkedProperty)) {
            return;
        }
        String[] names = fromProperty();
        if (names != null && toOpenSsl(names) == null) {
            throw new IllegalArgumentException("System property jdk.tls.namedGroups(" + v
                    + ") contains no supported named groups (" + Native.openSslVersion() + " has "
                    + String.join(", ", supported()) + ")");
        }
        checkedProperty = v;
    }

    /** JSSE names of the groups this OpenSSL implements, in the table's order. */
    public static Set<String> supported() {
        Set<String> s = supported;
        if (s == null) {
            String[] openssl = new String[KNOWN.length];
            for (int i = 0; i < KNOWN.length; i++) {
                openssl[i] = KNOWN[i][1];
            }
            boolean[] ok;
            try {
                ok = Native.groupsSupported(openssl);
            } catch (javax.net.ssl.SSLException e) {
                throw new IllegalStateException(e.getMessage(), e);
            }
            s = new LinkedHashSet<>();
            for (int i = 0; i < KNOWN.length; i++) {
                if (ok[i]) {
                    s.add(KNOWN[i][0]);
                }
            }
            s = java.util.Collections.unmodifiableSet(s);
            supported = s;
        }
        return s;
    }

    /**
     * OpenSSL's list for JSSE names (any case), or null when none of them is
     * a group this OpenSSL has. When the first group is a post-quantum one,
     * the first classic group gets a key share too (OpenSSL 3.5's "*"), as
     * OpenSSL's own default does, so a server without ML-KEM answers at once
     * instead of through a HelloRetryRequest.
     */
    static String toOpenSsl(String[] names) {
        Set<String> have = supported();
        List<String[]> out = new ArrayList<>();
        for (String n : names) {
            String[] k = n == null ? null : known(n.trim());
            if (k != null && have.contains(k[0]) && out.stream().noneMatch(o -> o == k)) {
                out.add(k);
            }
        }
        if (out.isEmpty()) {
            return null;
        }
        int share = -1;
        if (isPostQuantum(out.get(0)[0])) {
            for (int i = 1; i < out.size() && share < 0; i++) {
                share = isPostQuantum(out.get(i)[0]) ? -1 : i;
            }
        }
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < out.size(); i++) {
            s.append(i == 0 ? "" : ":").append(share > 0 && (i == 0 || i == share) ? "*" : "").append(out.get(i)[1]);
        }
        return s.toString();
    }

    /** The names that {@link #toOpenSsl} would leave out: unknown, or not in this OpenSSL. */
    public static List<String> unusable(String[] names) {
        Set<String> have = supported();
        List<String> out = new ArrayList<>();
        for (String n : names) {
            String[] k = n == null ? null : known(n.trim());
            if (k == null || !have.contains(k[0])) {
                out.add(n);
            }
        }
        return out;
    }

    private static boolean isPostQuantum(String jsse) {
        return jsse.contains("MLKEM");
    }

    private static String[] known(String name) {
        for (String[] k : KNOWN) {
            if (k[0].equalsIgnoreCase(name) || k[1].equalsIgnoreCase(name)) {
                return k;
            }
        }
        return null;
    }

    /**
     * The JSSE name of a group OpenSSL reports (its TLS name: "x25519",
     * "X25519MLKEM768", "brainpoolP256r1tls13"), in SunJSSE's spelling where
     * there is one, else OpenSSL's; null for null.
     */
    static String jsseName(byte[] openssl) {
        if (openssl == null) {
            return null;
        }
        String n = new String(openssl, StandardCharsets.US_ASCII);
        String[] k = known(n);
        return k != null ? k[0] : n;
    }
}
