package org.tlsbridge.session;

import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;

/**
 * How the client-session tests reach their server: an SSLEngine, tlsbridge's
 * native socket, or an SSLSocket layered over a plain one. The client session
 * cache is keyed the same way on all three, so each test runs on each.
 */
enum ClientTransport {
    ENGINE, SOCKET, LAYERED;

    /** A client socket connected to localhost:port, its handshake not yet begun (SOCKET and LAYERED). */
    SSLSocket socket(SSLContext client, int port) throws IOException {
        SSLSocketFactory f = client.getSocketFactory();
        switch (this) {
            case SOCKET:
                return (SSLSocket) f.createSocket("localhost", port);
            case LAYERED:
                return (SSLSocket) f.createSocket(new Socket(InetAddress.getLoopbackAddress(), port), "localhost",
                        port, true);
            default:
                throw new IllegalStateException(this + " has no socket: the test drives an SSLEngine");
        }
    }
}
