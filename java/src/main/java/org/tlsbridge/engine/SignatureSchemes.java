package org.tlsbridge.engine;

import java.util.ArrayList;
import java.util.List;

/**
 * TLS signature-scheme code points and the algorithm names JSSE's trust
 * managers compare certificate signatures against.
 */
final class SignatureSchemes {
    /** OpenSSL 3's default signature_algorithms, in its order. */
    private static final int[] LOCAL = {0x0403, 0x0503, 0x0603, 0x0807, 0x0808, 0x0804, 0x0805, 0x0806, 0x0809,
        0x080a, 0x080b, 0x0401, 0x0501, 0x0601, 0x0303, 0x0301, 0x0203, 0x0201};
    private static final String[] LOCAL_NAMES = names(LOCAL);

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

    static String[] names(int[] codes) {
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
