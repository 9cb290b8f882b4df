package org.tlsbridge.context;

import javax.net.ssl.SSLServerSocketFactory;
import javax.net.ssl.SSLSocketFactory;

/** Socket factories of a context; the native-descriptor sockets live in org.tlsbridge.socket. */
final class SocketSupport {
    private SocketSupport() {
    }

    static SSLSocketFactory socketFactory(ContextState s) {
        throw new UnsupportedOperationException("TLSBridge SSLSocket is not available in this build yet");
    }

    static SSLServerSocketFactory serverSocketFactory(ContextState s) {
        throw new UnsupportedOperationException("TLSBridge SSLServerSocket is not available in this build yet");
    }
}
