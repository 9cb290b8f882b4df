package org.tlsbridge.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import org.junit.jupiter.api.Test;
import org.tlsbridge.test.Contexts;

/** docs/security.md's list of suites is the provider's list: parsed here and compared both ways. */
class DocumentedSuitesTest {
    private static final Path DOC = Path.of("docs", "security.md");
    private static final Pattern ROW = Pattern.compile("^\\| `(TLS_\\w+)` \\| (1\\.[23]) \\| (yes|by name) \\|$",
            Pattern.MULTILINE);
    /** The families the doc's "Never available" paragraph names, as they appear in suite names. */
    private static final String[] NEVER = {"NULL", "anon", "EXPORT", "RC4", "DES", "MD5", "IDEA", "SEED",
        "CAMELLIA", "ARIA", "CCM", "PSK", "SRP", "DSS"};

    private static String doc() throws Exception {
        assertTrue(Files.isRegularFile(DOC), "run from the project root: " + DOC.toAbsolutePath() + " is missing");
        return Files.readString(DOC);
    }

    @Test
    void supportedAndDefaultSuitesAreTheDocumentedOnes() throws Exception {
        Set<String> documented = new TreeSet<>();
        Set<String> defaults = new TreeSet<>();
        Matcher m = ROW.matcher(doc());
        while (m.find()) {
            assertTrue(documented.add(m.group(1)), "listed twice: " + m.group(1));
            assertEquals(m.group(1).contains("_WITH_") ? "1.2" : "1.3", m.group(2), m.group(1));
            if (m.group(3).equals("yes")) {
                defaults.add(m.group(1));
            }
        }
        assertTrue(documented.size() > 10, "the doc's suite table was not found: " + documented);
        SSLContext ctx = Contexts.client(Contexts.TLSBRIDGE);
        SSLEngine e = ctx.createSSLEngine();
        assertEquals(documented, new TreeSet<>(Arrays.asList(e.getSupportedCipherSuites())));
        assertEquals(documented, new TreeSet<>(Arrays.asList(ctx.getSupportedSSLParameters().getCipherSuites())));
        assertEquals(documented, new TreeSet<>(Arrays.asList(ctx.getSocketFactory().getSupportedCipherSuites())));
        assertEquals(defaults, new TreeSet<>(Arrays.asList(ctx.getDefaultSSLParameters().getCipherSuites())));
        assertEquals(defaults, new TreeSet<>(Arrays.asList(e.getEnabledCipherSuites())));
    }

    @Test
    void neverAvailableMeansNeverListedNorEnabled() throws Exception {
        String text = doc();
        int at = text.indexOf("Never available, whatever is asked:");
        assertTrue(at >= 0, "the doc's never-available paragraph was not found");
        String para = text.substring(at, text.indexOf("\n\n", at)).toUpperCase(java.util.Locale.ROOT);
        SSLEngine e = Contexts.client(Contexts.TLSBRIDGE).createSSLEngine();
        for (String family : NEVER) {
            assertTrue(para.contains(family.equals("anon") ? "ANONYMOUS" : family), family + " not in: " + para);
            for (String s : e.getSupportedCipherSuites()) {
                assertFalse(s.contains("_" + family), family + " is documented as never available, but listed: " + s);
            }
        }
        for (String ccm : new String[] {"TLS_ECDHE_ECDSA_WITH_AES_128_CCM", "TLS_RSA_WITH_AES_256_CCM_8",
            "TLS_AES_128_CCM_SHA256", "TLS_AES_128_CCM_8_SHA256"}) {
            IllegalArgumentException x = assertThrows(IllegalArgumentException.class,
                    () -> e.setEnabledCipherSuites(new String[] {ccm}), ccm);
            assertTrue(x.getMessage().contains("Unsupported CipherSuite"), x.getMessage());
        }
    }
}
