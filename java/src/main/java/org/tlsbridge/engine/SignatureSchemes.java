package org.tlsbridge.engine;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * TLS signature-scheme code points and the algorithm names JSSE's trust
 * managers compare certificate signatures against.
 */
final class SignatureSchemes {
    /** OpenSSL 3's default signature_algorithms, in its order. */
    private static final int[] LOCAL = {0x0403, 0x0503, 0x0603, 0x0807, 0x0808, 0x0804, 0x0805, 0x0806, 0x0809,
        0x080a, 0x080b, 0x0401, 0x0501, 0x0601, 0x0303, 0x0301, 0x0203, 0x0201};
    private static final String[] LOCAL_NAMES = convert(LOCAL);

    /**
     * The last lists converted and their names. A server's clients are
     * mostly of a few kinds, each sending the same list on every connection,
     * and a handshake asks twice (certificate choice, then the finished
     * session), so most calls compare instead of converting. A few entries,
     * replaced in turn, so a client engine on the same thread (which learns
     * the server's list) or two kinds of client alternating do not evict
     * each other; a peer's list cannot grow it. Entries are immutable, so a
     * racing reader sees an old entry or a new one, both right. The names
     * array is shared: it is never handed out without a copy.
     */
    private static final Memo[] MEMO = new Memo[4];
    private static int next;

    private static final class Memo {
        final int[] codes;
        final String[] names;

        Memo(int[] codes, String[] names) {
            this.codes = codes;
            this.names = names;
        }
    }

    private SignatureSchemes() {
    }

    static String javaName(int code) {
        switch (code) {
            case 0x0403: return "SHA256withECDSA";
            case 0x0503: return "SHA384withECDSA";
            case 0x0603: return "SHA512withECDSA";
            case 0x0807: return "Ed25519";
            case 0x0808: return "Ed448";
            case 0x0804: case 0x0805: case 0x0806:
            case 0x0809: case 0x080a: case 0x080b: return "RSASSA-PSS";
            case 0x0401: return "SHA256withRSA";
            case 0x0501: return "SHA384withRSA";
            case 0x0601: return "SHA512withRSA";
            case 0x0303: return "SHA224withECDSA";
            case 0x0301: return "SHA224withRSA";
            case 0x0203: return "SHA1withECDSA";
            case 0x0201: return "SHA1withRSA";
            case 0x0402: return "SHA256withDSA";
            default: return null;
        }
    }

    /** The key type a scheme signs with, as KeyManagers name key types. */
    static String keyType(int code) {
        switch (code) {
            case 0x0403: case 0x0503: case 0x0603: case 0x0303: case 0x0203: return "EC";
            case 0x0804: case 0x0805: case 0x0806:
            case 0x0401: case 0x0501: case 0x0601: case 0x0301: case 0x0201: return "RSA";
            case 0x0809: case 0x080a: case 0x080b: return "RSASSA-PSS";
            case 0x0807: case 0x0808: return "EdDSA";
            default: return null;
        }
    }

    /** The Java names of a peer's schemes, in its order, each once. Shared: callers must not modify it. */
    static String[] names(int[] codes) {
        Memo[] memo = MEMO;
        for (Memo m : memo) {
            if (m != null && Arrays.equals(m.codes, codes)) {
                return m.names;
            }
        }
        String[] names = convert(codes);
        int i = next;
        memo[i] = new Memo(codes.clone(), names);
        next = (i + 1) % memo.length;
        return names;
    }

    private static String[] convert(int[] codes) {
        List<String> out = new ArrayList<>();
        for (int c : codes) {
            String n = javaName(c);
            if (n != null && !out.contains(n)) {
                out.add(n);
            }
        }
        return out.toArray(new String[0]);
    }

    static String[] localJavaNames() {
        return LOCAL_NAMES.clone();
    }
}
