package org.tlsbridge.tomcat;

import java.util.List;
import java.util.Map;
import javax.net.ssl.SSLSession;
import org.apache.juli.logging.Log;
import org.apache.juli.logging.LogFactory;
import org.apache.tomcat.util.net.SSLHostConfigCertificate;
import org.apache.tomcat.util.net.SSLImplementation;
import org.apache.tomcat.util.net.SSLSupport;
import org.apache.tomcat.util.net.SSLUtil;
import org.apache.tomcat.util.net.jsse.JSSESupport;
import org.tlsbridge.TlsBridgeProvider;
import org.tlsbridge.internal.NativeObjects;

/**
 * Tomcat's pluggable TLS implementation backed by tlsbridge: set
 * {@code sslImplementationName="org.tlsbridge.tomcat.TlsBridgeImplementation"}
 * on an NIO/NIO2 connector and keep the rest of its {@code SSLHostConfig}.
 *
 * <p>Tomcat creates one instance per connector when the connector starts, so
 * the log line written here names what serves that connector. A missing or
 * unloadable native library fails the connector at start, never a request.
 */
public class TlsBridgeImplementation extends SSLImplementation {
    private static final Log log = LogFactory.getLog(TlsBridgeImplementation.class);

    public TlsBridgeImplementation() {
        String openssl;
        try {
            openssl = TlsBridgeProvider.openSslVersion();
        } catch (LinkageError e) {
            throw new IllegalStateException("tlsbridge cannot load its native library: " + e.getMessage(), e);
        }
        // Builds JSSESupport's key-size table now rather than in the first request.
        new JSSESupport(null, null);
        // Next to Tomcat's own MBeans: shows that a reloadSslHostConfigs frees the old contexts.
        NativeObjects.register();
        log.info("TLS for this connector is served by " + getClass().getName() + ": tlsbridge "
                + TlsBridgeProvider.tlsbridgeVersion() + ", " + openssl + ", native library "
                + TlsBridgeProvider.nativeLibraryPath());
    }

    @Override
    public SSLSupport getSSLSupport(SSLSession session, Map<String, List<String>> additionalAttributes) {
        // Our sessions are ordinary SSLSessions: Tomcat's own attribute mapping
        // (certificate chain, cipher suite, key size, session id) applies as is;
        // the subclass adds the key-exchange group.
        return new TlsBridgeSupport(session, additionalAttributes);
    }

    @Override
    public SSLUtil getSSLUtil(SSLHostConfigCertificate certificate) {
        return new TlsBridgeUtil(certificate);
    }
}
