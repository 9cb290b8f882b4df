package org.tlsbridge.context;

import javax.net.ssl.SSLServerSocketFactory;
import javax.net.ssl.SSLSocketFactory;
import org.tlsbridge.socket.TlsBridgeServerSocketFactory;
import org.tlsbridge.socket.TlsBridgeSocketFactory;

/** Socket factories of a context; the native-descriptor sockets live in org.tlsbridge.socket. */
final class SocketSupport {
    private SocketSupport() {
    }

    static SSLSocketFactory socketFactory(ContextState s) {
        return new TlsBridgeSocketFactory(s);
    }

    static SSLServerSocketFactory serverSocketFactory(ContextState s) {
        return new TlsBridgeServerSocketFactory(s);
    }
}
