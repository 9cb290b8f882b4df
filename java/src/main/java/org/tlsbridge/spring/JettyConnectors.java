package org.tlsbridge.spring;

import java.security.Provider;
import java.security.Security;
import java.util.ServiceLoader;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.eclipse.jetty.io.ssl.ALPNProcessor;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.tlsbridge.TlsBridgeProvider;

/**
 * The Jetty 12 part shared by Spring Boot 3.5 and 4.0: Spring Boot's own SSL
 * customizer has built the {@code SslContextFactory.Server} from
 * {@code server.ssl.*} or a bundle; only its JCA provider changes to
 * TLSBridge, as Spring Boot itself does for Conscrypt. The provider is added
 * at the end of the JCA list, so nothing that asks for "TLS" without a
 * provider name changes.
 *
 * <p>HTTP/2 needs an ALPN processor that applies to tlsbridge's engine (the
 * JDK's applies to {@code java.base} engines only): a connector with ALPN and
 * no such processor on the class path stays on JSSE, with a WARN.
 */
final class JettyConnectors {
    private static final Log log = LogFactory.getLog(TlsBridgeAutoConfiguration.class);

    private JettyConnectors() {
    }

    static void customize(Server server, NativeCheck check) {
        for (Connector connector : server.getConnectors()) {
            SslConnectionFactory ssl = connector.getConnectionFactory(SslConnectionFactory.class);
            if (ssl == null || !check.usable()) {
                continue;
            }
            if (connector.getConnectionFactory("alpn") != null && !hasAlpnProcessor()) {
                log.warn("Jetty connector " + connector.getProtocols() + " stays on JSSE: ALPN (HTTP/2) through"
                        + " tlsbridge needs a tlsbridge ALPNProcessor.Server on the class path");
                continue;
            }
            registerProvider();
            ssl.getSslContextFactory().setProvider(TlsBridgeProvider.NAME);
        }
    }

    private static boolean hasAlpnProcessor() {
        for (ALPNProcessor.Server p : ServiceLoader.load(ALPNProcessor.Server.class)) {
            if (p.getClass().getName().startsWith("org.tlsbridge.")) {
                return true;
            }
        }
        return false;
    }

    private static synchronized void registerProvider() {
        Provider p = Security.getProvider(TlsBridgeProvider.NAME);
        if (p == null) {
            Security.addProvider(new TlsBridgeProvider());
        }
    }
}
