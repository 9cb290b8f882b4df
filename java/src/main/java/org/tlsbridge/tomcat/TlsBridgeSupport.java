package org.tlsbridge.tomcat;

import java.util.List;
import java.util.Map;
import javax.net.ssl.SSLSession;
import org.apache.tomcat.util.net.jsse.JSSESupport;
import org.tlsbridge.TlsBridgeProvider;

/**
 * Tomcat's view of a tlsbridge connection: {@link JSSESupport}'s request
 * attributes as they are, plus what Tomcat has no attribute for. Tomcat
 * hands this object to requests as the {@code SSLSupport.SESSION_MGR}
 * attribute ({@code jakarta.servlet.request.ssl_session_mgr}), so a servlet
 * reads {@link #getNamedGroup()} from it, and an access log pattern
 * {@code %{jakarta.servlet.request.ssl_session_mgr}r} prints
 * {@link #toString()}: protocol, suite and key-exchange group.
 */
public final class TlsBridgeSupport extends JSSESupport {
    private final SSLSession session;

    TlsBridgeSupport(SSLSession session, Map<String, List<String>> additionalAttributes) {
        super(session, additionalAttributes);
        this.session = session;
    }

    /** The connection's session (a tlsbridge one: {@link TlsBridgeProvider#negotiatedGroup} and friends apply). */
    public SSLSession getSession() {
        return session;
    }

    /** The key-exchange group the handshake negotiated ("X25519MLKEM768", "x25519", ...), or null. */
    public String getNamedGroup() {
        return TlsBridgeProvider.negotiatedGroup(session);
    }

    /** "TLSv1.3 TLS_AES_128_GCM_SHA256 X25519MLKEM768" ("-" for no group): what access logs print. */
    @Override
    public String toString() {
        if (session == null) {
            return "-";
        }
        String g = getNamedGroup();
        return session.getProtocol() + " " + session.getCipherSuite() + " " + (g == null ? "-" : g);
    }
}
