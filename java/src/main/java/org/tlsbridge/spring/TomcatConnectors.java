package org.tlsbridge.spring;

import org.apache.catalina.connector.Connector;
import org.tlsbridge.tomcat.TlsBridgeImplementation;

/**
 * The Tomcat part shared by Spring Boot 3.5 and 4.0: a connector that Spring
 * Boot made a TLS connector (from {@code server.ssl.*} or a bundle, which it
 * has already turned into SSLHostConfigs when connector customizers run)
 * gets tlsbridge as its SSL implementation; plain HTTP connectors are left
 * alone. The SSLHostConfigs themselves are untouched, so an SSL bundle
 * reload (Spring replaces the host config) builds a new tlsbridge context.
 */
final class TomcatConnectors {
    private TomcatConnectors() {
    }

    static void customize(Connector connector, NativeCheck check) {
        if (connector.findSslHostConfigs().length == 0 || !Boolean.TRUE.equals(connector.getProperty("SSLEnabled"))) {
            return;
        }
        if (check.usable()) {
            connector.setProperty("sslImplementationName", TlsBridgeImplementation.class.getName());
        }
    }
}
