package org.tlsbridge.spring;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.origin.Origin;
import org.springframework.boot.origin.OriginLookup;
import org.springframework.boot.origin.SystemEnvironmentOrigin;
import org.springframework.core.env.CommandLinePropertySource;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.Environment;
import org.springframework.core.env.PropertySource;
import org.tlsbridge.TlsBridgeProvider;
import org.tlsbridge.internal.NativeLibrary;

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
    /** How the user wrote tlsbridge.openssl: the name, and where; null when not set. */
    private final String[] written;
    private volatile Boolean usable;

    NativeCheck(Environment env) {
        this.required = env.getProperty(REQUIRED, Boolean.class, Boolean.FALSE);
        this.openssl = env.getProperty(OPENSSL);
        this.written = openssl == null ? null : written(env);
    }

    /**
     * The name of the tlsbridge.openssl setting as the user wrote it, and where it was written: an error
     * about its value must send them there, not to a {@code -D} they never wrote.
     */
    static String[] written(Environment env) {
        if (env instanceof ConfigurableEnvironment) {
            for (PropertySource<?> ps : ((ConfigurableEnvironment) env).getPropertySources()) {
                if (ConfigurationPropertySources.isAttachedConfigurationPropertySource(ps)
                        || !ps.containsProperty(OPENSSL)) {
                    continue; // the attached source is a view of all the others
                }
                if (CommandLinePropertySource.COMMAND_LINE_PROPERTY_SOURCE_NAME.equals(ps.getName())) {
                    return new String[] {"--" + OPENSSL, null};
                }
                Origin origin = OriginLookup.getOrigin(ps, OPENSSL);
                if (origin instanceof SystemEnvironmentOrigin) {
                    return new String[] {((SystemEnvironmentOrigin) origin).getProperty(), "environment variable"};
                }
                return new String[] {OPENSSL, origin != null ? origin.toString()
                        : "Spring property source \"" + ps.getName() + "\""};
            }
        }
        return new String[] {OPENSSL, "Spring property"};
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
            NativeLibrary.choiceWrittenAs(written[0], written[1]);
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
