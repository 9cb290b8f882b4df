package org.tlsbridge.tomcat;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import javax.net.ssl.SSLException;
import org.tlsbridge.context.CipherSuites;
import org.tlsbridge.internal.Native;
import org.tlsbridge.internal.NativeLibrary;

/**
 * Tomcat's {@code ciphers} attribute, in OpenSSL syntax, as Java/IANA names,
 * or mixed, resolved by OpenSSL itself: Java names are turned into OpenSSL's
 * names token by token, then the whole string is applied to a throw-away
 * SSL_CTX and the suites it selects are listed in OpenSSL's order.
 */
final class CipherConfig {
    /** What a string resolved to: enabled suites in order, and what was left out. */
    static final class Result {
        final String[] enabled;
        final List<String> skipped;

        Result(String[] enabled, List<String> skipped) {
            this.enabled = enabled;
            this.skipped = skipped;
        }
    }

    private CipherConfig() {
    }

    static Result resolve(String spec) throws SSLException {
        NativeLibrary.ensureLoaded();
        CipherSuites suites = CipherSuites.get();
        List<String> unknown = new ArrayList<>();
        String openssl = toOpenSsl(spec, suites, unknown);
        List<String> enabled = new ArrayList<>();
        List<String> skipped = new ArrayList<>(unknown);
        Set<String> seen = new LinkedHashSet<>();
        for (String std : Native.cipherExpand(openssl)) {
            if (!seen.add(std)) {
                continue;
            }
            if (suites.isSupported(std)) {
                enabled.add(std);
            } else {
                skipped.add(std);
            }
        }
        return new Result(enabled.toArray(new String[0]), skipped);
    }

    /**
     * Java names become OpenSSL names (TLS 1.3 names are the same in both);
     * every other token (aliases, "!x", "+x", "@STRENGTH") passes unchanged.
     * Java-style names no provider knows are reported, not passed on.
     */
    static String toOpenSsl(String spec, CipherSuites suites, List<String> unknown) {
        StringBuilder out = new StringBuilder();
        for (String tok : spec.trim().split("[:, ]+")) {
            if (tok.isEmpty()) {
                continue;
            }
            String mapped = tok;
            if (looksJava(tok)) {
                if (!suites.isSupported(tok)) {
                    unknown.add(tok);
                    continue;
                }
                CipherSuites.Lists l = suites.lists(new String[] {tok});
                mapped = l.any13 ? l.tls13 : l.tls12;
            }
            if (out.length() > 0) {
                out.append(':');
            }
            out.append(mapped);
        }
        return out.toString();
    }

    /** IANA/Java suite names: upper case with underscores, starting TLS_ or SSL_. */
    static boolean looksJava(String tok) {
        return (tok.startsWith("TLS_") || tok.startsWith("SSL_")) && tok.indexOf('-') < 0;
    }
}
