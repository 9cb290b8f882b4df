package org.tlsbridge.context;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.net.ssl.SSLException;
import org.tlsbridge.internal.Native;

/**
 * Java standard cipher-suite names to OpenSSL's and back. The table comes
 * from OpenSSL itself (SSL_CIPHER_standard_name), so it cannot drift.
 */
public final class CipherSuites {
    /** Names JSSE users pass that are signals, not suites; accepted and ignored. */
    private static final Set<String> SIGNALS = Set.of("TLS_EMPTY_RENEGOTIATION_INFO_SCSV", "TLS_FALLBACK_SCSV");

    private static volatile CipherSuites instance;

    private final Map<String, String> opensslName = new LinkedHashMap<>();
    private final Map<String, String> javaName = new LinkedHashMap<>();
    private final Set<String> tls13;
    private final String[] supported;

    /** OpenSSL lists for an SSL: TLS 1.2 (OpenSSL names) and TLS 1.3 (standard names). */
    public static final class Lists {
        public final String tls12;
        public final String tls13;
        public final boolean any12;
        public final boolean any13;

        Lists(String tls12, String tls13) {
            this.tls12 = tls12;
            this.tls13 = tls13;
            this.any12 = !tls12.isEmpty();
            this.any13 = !tls13.isEmpty();
        }
    }

    private CipherSuites(String[] triples) {
        List<String> names = new ArrayList<>();
        java.util.HashSet<String> t13 = new java.util.HashSet<>();
        for (int i = 0; i + 2 < triples.length; i += 3) {
            String std = triples[i];
            if (opensslName.containsKey(std)) {
                continue;
            }
            opensslName.put(std, triples[i + 1]);
            javaName.put(triples[i + 1], std);
            if ("13".equals(triples[i + 2])) {
                t13.add(std);
            }
            names.add(std);
        }
        this.tls13 = Set.copyOf(t13);
        this.supported = names.toArray(new String[0]);
    }

    public static CipherSuites get() throws SSLException {
        CipherSuites c = instance;
        if (c == null) {
            synchronized (CipherSuites.class) {
                c = instance;
                if (c == null) {
                    c = new CipherSuites(Native.ciphers());
                    instance = c;
                }
            }
        }
        return c;
    }

    public String[] supported() {
        return supported.clone();
    }

    public boolean isSupported(String name) {
        return opensslName.containsKey(name);
    }

    public boolean isTls13(String name) {
        return tls13.contains(name);
    }

    /** Java name for an OpenSSL or standard name, or the input when unknown. */
    public String toJava(String name) {
        if (opensslName.containsKey(name)) {
            return name;
        }
        return javaName.getOrDefault(name, name);
    }

    /**
     * Validates a user's list exactly as SunJSSE does: null or an unknown
     * name is an IllegalArgumentException; order is kept.
     */
    public String[] check(String[] names) {
        if (names == null) {
            throw new IllegalArgumentException("cipher suites must not be null");
        }
        List<String> out = new ArrayList<>(names.length);
        for (String n : names) {
            if (n == null) {
                throw new IllegalArgumentException("null cipher suite name");
            }
            if (SIGNALS.contains(n)) {
                continue;
            }
            String std = toJava(n);
            if (!opensslName.containsKey(std)) {
                throw new IllegalArgumentException("Unsupported CipherSuite: " + n);
            }
            if (!out.contains(std)) {
                out.add(std);
            }
        }
        return out.toArray(new String[0]);
    }

    public Lists lists(String[] enabled) {
        StringBuilder s12 = new StringBuilder();
        StringBuilder s13 = new StringBuilder();
        for (String n : enabled) {
            if (tls13.contains(n)) {
                (s13.length() == 0 ? s13 : s13.append(':')).append(n);
            } else {
                String o = opensslName.get(n);
                if (o != null) {
                    (s12.length() == 0 ? s12 : s12.append(':')).append(o);
                }
            }
        }
        return new Lists(s12.toString(), s13.toString());
    }

    private volatile String[] defaults;

    /**
     * tlsbridge's own defaults (native/core/context.c) as standard names, in
     * preference order: TLS 1.3 suites, then ECDHE with AES-GCM or
     * ChaCha20-Poly1305. Read from a throw-away SSL_CTX so they cannot drift.
     */
    public String[] defaults() throws SSLException {
        String[] d = defaults;
        if (d == null) {
            long c = Native.ctxNew();
            try {
                d = compact(Native.ctxCipherNames(c));
            } finally {
                Native.ctxFree(c);
            }
            defaults = d;
        }
        return d.clone();
    }

    /**
     * A side's default suites: SunJSSE's jdk.tls.client.cipherSuites /
     * jdk.tls.server.cipherSuites when set (unsupported names are dropped, as
     * SunJSSE drops them), else {@link #defaults()}.
     */
    public String[] sideDefaults(boolean client) throws SSLException {
        String[] custom = fromProperty(client ? "jdk.tls.client.cipherSuites" : "jdk.tls.server.cipherSuites");
        return custom != null ? custom : defaults();
    }

    /** The supported suites a comma-separated system property names, or null when it names none. */
    String[] fromProperty(String property) {
        String v = System.getProperty(property);
        if (v == null || v.isBlank()) {
            return null;
        }
        String t = v.trim();
        if (t.length() > 1 && t.startsWith("\"") && t.endsWith("\"")) {
            t = t.substring(1, t.length() - 1);
        }
        List<String> out = new ArrayList<>();
        for (String n : t.split("\\s*,\\s*")) {
            String std = toJava(n.trim());
            if (isSupported(std) && !out.contains(std)) {
                out.add(std);
            }
        }
        return out.isEmpty() ? null : out.toArray(new String[0]);
    }

    /** Non-null entries of a native name array, in order. */
    static String[] compact(String[] names) {
        return Arrays.stream(names).filter(n -> n != null).toArray(String[]::new);
    }
}
