package org.tlsbridge.jetty;

import java.util.List;
import java.util.function.BiFunction;
import javax.net.ssl.SSLEngine;
import org.eclipse.jetty.alpn.server.ALPNServerConnection;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.ssl.ALPNProcessor;
import org.eclipse.jetty.io.ssl.SslConnection;
import org.eclipse.jetty.io.ssl.SslHandshakeListener;
import org.tlsbridge.engine.TlsBridgeEngine;

/**
 * Jetty 12's server ALPN processor for tlsbridge engines, found by Jetty's
 * {@code ALPNServerConnectionFactory} through {@code ServiceLoader}
 * ({@code META-INF/services/org.eclipse.jetty.io.ssl.ALPNProcessor$Server}).
 * Jetty's own processor takes only engines whose class is in
 * {@code java.base}; without this one, Jetty drops every tlsbridge
 * connection before the ServerHello. Only Jetty loads this class, so the
 * provider itself never needs Jetty on the class path.
 *
 * <p>The negotiation itself stays Jetty's: the engine's standard
 * {@link SSLEngine#setHandshakeApplicationProtocolSelector selector} hands
 * the client's list to {@link ALPNServerConnection#select}, which applies
 * the server's order and HTTP/2's cipher rules.
 */
public final class TlsBridgeServerALPNProcessor implements ALPNProcessor.Server {
    @Override
    public boolean appliesTo(SSLEngine sslEngine) {
        return sslEngine instanceof TlsBridgeEngine;
    }

    @Override
    public void configure(SSLEngine sslEngine, Connection connection) {
        Negotiation n = new Negotiation((ALPNServerConnection) connection);
        sslEngine.setHandshakeApplicationProtocolSelector(n);
        ((SslConnection.SslEndPoint) connection.getEndPoint()).getSslConnection().addHandshakeListener(n);
    }

    @Override
    public String toString() {
        return getClass().getSimpleName();
    }

    private static final class Negotiation implements BiFunction<SSLEngine, List<String>, String>, SslHandshakeListener {
        private final ALPNServerConnection connection;

        Negotiation(ALPNServerConnection connection) {
            this.connection = connection;
        }

        /** Called during the handshake only when the client offered ALPN. */
        @Override
        public String apply(SSLEngine engine, List<String> offered) {
            try {
                connection.select(offered);
            } catch (IllegalStateException noOverlap) {
                // null makes the engine send no_application_protocol, as RFC 7301 asks
                return null;
            }
            return connection.getProtocol();
        }

        /** A client that sent no ALPN gets the connector's default protocol. */
        @Override
        public void handshakeSucceeded(Event event) {
            if (connection.getProtocol() == null) {
                connection.unsupported();
            }
        }
    }
}
