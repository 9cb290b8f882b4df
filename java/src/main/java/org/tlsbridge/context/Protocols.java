package org.tlsbridge.context;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.tlsbridge.internal.NativeConstants;

/** TLS 1.2 and 1.3 only; older names are known, kept when enabled, and never negotiated. */
public final class Protocols {
    public static final String TLS12 = "TLSv1.2";
    public static final String TLS13 = "TLSv1.3";
    public static final int TLS12_VERSION = NativeConstants.TLS1_2_VERSION;
    public static final int TLS13_VERSION = NativeConstants.TLS1_3_VERSION;
    private static final Set<String> RETIRED = Set.of("SSLv2Hello", "SSLv2", "SSLv3", "TLSv1", "TLSv1.1");

    private Protocols() {
    }

    public static String[] supported() {
        return new String[] {TLS13, TLS12};
    }

    /**
     * SunJSSE accepts the names of protocols it has disabled and reports them
     * as enabled, never negotiating them; so do we, so that code written for
     * it keeps working (and a list of only those fails its handshake by name,
     * see {@link #refusal}). Anything else is an IllegalArgumentException.
     */
    public static String[] check(String[] names) {
        if (names == null) {
            throw new IllegalArgumentException("protocols must not be null");
        }
        List<String> out = new ArrayList<>();
        for (String n : names) {
            if (n == null) {
                throw new IllegalArgumentException("null protocol name");
            }
            if (!TLS12.equals(n) && !TLS13.equals(n) && !RETIRED.contains(n)) {
                throw new IllegalArgumentException("Unsupported protocol: " + n);
            }
            if (!out.contains(n)) {
                out.add(n);
            }
        }
        return out.toArray(new String[0]);
    }

    /** Whether the list names TLS 1.2 or 1.3, the versions tlsbridge speaks. */
    public static boolean anyUsable(String[] enabled) {
        for (String p : enabled) {
            if (TLS12.equals(p) || TLS13.equals(p)) {
                return true;
            }
        }
        return false;
    }

    /** The handshake failure of a list with neither TLS 1.2 nor 1.3 (SunJSSE: "No appropriate protocol"). */
    public static String refusal(String[] enabled) {
        return "No appropriate protocol: the enabled protocols " + List.of(enabled)
                + (enabled.length == 0 ? "" : " are all disabled in tlsbridge")
                + "; it speaks TLSv1.3 and TLSv1.2 (setEnabledProtocols)";
    }

    /** {min, max} versions; an empty set gives min > max so the handshake fails cleanly. */
    public static int[] range(String[] enabled, boolean any12Suites, boolean any13Suites) {
        boolean v12 = false;
        boolean v13 = false;
        for (String p : enabled) {
            v12 |= TLS12.equals(p);
            v13 |= TLS13.equals(p);
        }
        v12 &= any12Suites;
        v13 &= any13Suites;
        if (v12 && v13) {
            return new int[] {TLS12_VERSION, TLS13_VERSION};
        }
        if (v13) {
            return new int[] {TLS13_VERSION, TLS13_VERSION};
        }
        if (v12) {
            return new int[] {TLS12_VERSION, TLS12_VERSION};
        }
        return new int[] {TLS13_VERSION, TLS12_VERSION};
    }
}
