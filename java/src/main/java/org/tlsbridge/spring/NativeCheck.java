package org.tlsbridge.spring;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.core.env.Environment;
import org.tlsbridge.TlsBridgeProvider;

/**
 * Whether tlsbridge can serve TLS in this JVM, decided once per application
 * from {@code tlsbridge.required}: when the native library cannot load,
 * either one WARN naming the reason and the server stays on JSSE (the
 * default), or the start fails with that reason.
 */
final class NativeCheck {
    static final String REQUIRED = "tlsbridge.required";
    /** Which OpenSSL serves (bundled, system): the -Dtlsbridge.openssl system property, as a Spring property. */
    static final String OPENSSL = "tlsbridge.openssl";
    private static final Log log = LogFactory.getLog(TlsBridgeAutoConfiguration.class);

    private final boolean required;
    private final String openssl;
    private volatile Boolean usable;

    NativeCheck(Environment env) {
        this.required = env.getProperty(REQUIRED, Boolean.class, Boolean.FALSE);
        this.openssl = env.getProperty(OPENSSL);
    }

    /** True when tlsbridge serves TLS; false (after one WARN) when JSSE stays. */
    boolean usable() {
        Boolean u = usable;
        if (u == null) {
            synchronized (this) {
                if (usable == null) {
                    usable = load();
                }
                u = usable;
            }
        }
        return u;
    }

    private boolean load() {
        // The library reads the system property when it loads, which is here
        // unless something in this JVM made an SSLContext first.
        if (this.openssl != null && System.getProperty(OPENSSL) == null) {
            System.setProperty(OPENSSL, this.openssl);
        }
        String openssl;
        try {
            openssl = TlsBridgeProvider.openSslVersion();
        } catch (LinkageError | RuntimeException e) {
            if (required) {
                throw new IllegalStateException(REQUIRED + "=true but " + e.getMessage(), e);
            }
            log.warn("TLS stays on the JDK's JSSE (set " + REQUIRED + "=true to fail instead): " + e.getMessage());
            return false;
        }
        log.info("TLS of the embedded web server is served by tlsbridge " + TlsBridgeProvider.tlsbridgeVersion()
                + " on " + openssl);
        return true;
    }
}
