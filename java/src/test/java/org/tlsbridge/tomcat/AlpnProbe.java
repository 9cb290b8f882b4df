package org.tlsbridge.tomcat;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import org.tlsbridge.test.Contexts;
import org.tlsbridge.test.EnginePair;

/** Whether two tlsbridge engines agree on "h2" by ALPN, in memory: the precondition of HTTP/2 over TLS. */
final class AlpnProbe {
    private AlpnProbe() {
    }

    static boolean engineNegotiatesAlpn() throws Exception {
        SSLContext server = Contexts.server(Contexts.TLSBRIDGE, "rsa");
        SSLContext client = Contexts.client(Contexts.TLSBRIDGE);
        EnginePair p = new EnginePair(client, server, false);
        SSLParameters cp = p.client.getSSLParameters();
        cp.setApplicationProtocols(new String[] {"h2", "http/1.1"});
        p.client.setSSLParameters(cp);
        SSLParameters sp = p.server.getSSLParameters();
        sp.setApplicationProtocols(new String[] {"h2"});
        p.server.setSSLParameters(sp);
        p.handshake();
        return "h2".equals(p.client.getApplicationProtocol()) && "h2".equals(p.server.getApplicationProtocol());
    }
}
