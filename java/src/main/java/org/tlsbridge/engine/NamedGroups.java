package org.tlsbridge.engine;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import javax.net.ssl.SSLParameters;

/**
 * Key-exchange groups by their JSSE names (x25519, secp256r1, ...), from
 * SSLParameters.getNamedGroups on JDK 20+ or the jdk.tls.namedGroups
 * property on older JDKs, translated to OpenSSL's group list.
 */
final class NamedGroups {
    /** SSLParameters.getNamedGroups is public API from JDK 20; looked up, not linked, to run on 17. */
    private static final MethodHandle GET_NAMED_GROUPS = find("getNamedGroups");
    private static final MethodHandle SET_NAMED_GROUPS = find("setNamedGroups");

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

    static void into(SSLParameters p, String[] groups) {
        if (SET_NAMED_GROUPS == null || groups == null) {
            return;
        }
        try {
            SET_NAMED_GROUPS.invoke(p, (Object) groups.clone());
        } catch (Throwable t) {
            // older JDK: nothing to report through SSLParameters
        }
    }

    /** The process-wide default, as SunJSSE reads it. */
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

    /** OpenSSL's list for JSSE names; names OpenSSL lacks are skipped as SunJSSE skips them. */
    static String toOpenSsl(String[] names) {
        List<String> out = new ArrayList<>();
        for (String n : names) {
            String o = openSslName(n.trim().toLowerCase(Locale.ROOT));
            if (o != null && !out.contains(o)) {
                out.add(o);
            }
        }
        return out.isEmpty() ? null : String.join(":", out);
    }

    private static String openSslName(String jsse) {
        switch (jsse) {
            case "x25519": return "X25519";
            case "x448": return "X448";
            case "secp256r1": return "P-256";
            case "secp384r1": return "P-384";
            case "secp521r1": return "P-521";
            case "ffdhe2048": return "ffdhe2048";
            case "ffdhe3072": return "ffdhe3072";
            case "ffdhe4096": return "ffdhe4096";
            case "ffdhe6144": return "ffdhe6144";
            case "ffdhe8192": return "ffdhe8192";
            default: return null;
        }
    }
}
