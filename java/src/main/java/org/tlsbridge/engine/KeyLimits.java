package org.tlsbridge.engine;

import java.security.Security;
import java.util.Locale;

/**
 * How many bytes of plaintext one TLS 1.3 write key may protect before a KeyUpdate, from the
 * {@code jdk.tls.keyLimits} security property, read once as SunJSSE reads it (the JDK's
 * java.security sets {@code AES/GCM/NoPadding KeyUpdate 2^37, ChaCha20-Poly1305 KeyUpdate 2^37}).
 * An entry is {@code <cipher transformation> KeyUpdate <bytes>}, bytes a number or {@code 2^N},
 * between 1 and 2^62; an entry for another cipher, with another action or a bad number is skipped,
 * as SunJSSE skips it. No entry for a cipher: no limit. TLS 1.2 keys have none (see docs/security.md).
 */
final class KeyLimits {
    private static final long MAX = 1L << 62;
    private static final System.Logger LOG = System.getLogger("org.tlsbridge.engine");

    /** Bytes per write key for the AES-GCM suites, 0 for no limit. */
    static final long AES_GCM;
    /** Bytes per write key for the ChaCha20-Poly1305 suite, 0 for no limit. */
    static final long CHACHA20;

    static {
        long[] limits = parse(Security.getProperty("jdk.tls.keyLimits"));
        AES_GCM = limits[0];
        CHACHA20 = limits[1];
    }

    private KeyLimits() {
    }

    /** {AES-GCM, ChaCha20-Poly1305} limits in bytes, 0 where the value names none. */
    static long[] parse(String value) {
        long[] out = new long[2];
        if (value == null) {
            return out;
        }
        for (String entry : value.split(",")) {
            String[] words = entry.trim().toUpperCase(Locale.ENGLISH).split(" ");
            if (words.length < 3 || !words[1].contains("KEYUPDATE")) {
                skip(entry, "not \"<cipher> KeyUpdate <bytes>\"");
                continue;
            }
            long bytes;
            try {
                int caret = words[2].indexOf('^');
                bytes = caret >= 0 ? (long) Math.pow(2, Integer.parseInt(words[2].substring(caret + 1)))
                        : Long.parseLong(words[2]);
            } catch (NumberFormatException e) {
                skip(entry, "the byte count is not a number or 2^N");
                continue;
            }
            if (bytes < 1 || bytes > MAX) {
                skip(entry, "the byte count is not between 1 and 2^62");
                continue;
            }
            if (words[0].equals("AES/GCM/NOPADDING")) {
                out[0] = bytes;
            } else if (words[0].equals("CHACHA20-POLY1305")) {
                out[1] = bytes;
            }
        }
        return out;
    }

    private static void skip(String entry, String why) {
        LOG.log(System.Logger.Level.DEBUG, "jdk.tls.keyLimits: entry \"{0}\" ignored: {1}", entry.trim(), why);
    }
}
