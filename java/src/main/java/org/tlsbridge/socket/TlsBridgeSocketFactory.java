package org.tlsbridge.socket;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import javax.net.ssl.SSLSocketFactory;
import org.tlsbridge.context.ContextState;

/**
 * SSLSocketFactory of a tlsbridge SSLContext. Sockets it creates and
 * connects itself own their descriptor natively ({@link TlsBridgeSocket});
 * sockets layered over an existing Socket run the tlsbridge SSLEngine over
 * that socket's streams ({@link LayeredSslSocket}).
 */
public final class TlsBridgeSocketFactory extends SSLSocketFactory {
    private final ContextState ctx;

    public TlsBridgeSocketFactory(ContextState ctx) {
        this.ctx = ctx;
    }

    @Override
    public String[] getDefaultCipherSuites() {
        return ctx.defaultCipherSuites(true);
    }

    @Override
    public String[] getSupportedCipherSuites() {
        return ctx.suites().supported();
    }

    @Override
    public Socket createSocket() {
        return new TlsBridgeSocket(ctx);
    }

    @Override
    public Socket createSocket(String host, int port) throws IOException {
        return createSocket(host, port, null, 0);
    }

    @Override
    public Socket createSocket(String host, int port, InetAddress localHost, int localPort) throws IOException {
        return connect(new TlsBridgeSocket(ctx, host), new InetSocketAddress(host, port), localHost, localPort);
    }

    @Override
    public Socket createSocket(InetAddress host, int port) throws IOException {
        return createSocket(host, port, null, 0);
    }

    @Override
    public Socket createSocket(InetAddress address, int port, InetAddress localAddress, int localPort)
            throws IOException {
        InetSocketAddress a = new InetSocketAddress(address, port);
        // getHostString: the name the address was made from, never a reverse lookup
        return connect(new TlsBridgeSocket(ctx, a.getHostString()), a, localAddress, localPort);
    }

    private static Socket connect(TlsBridgeSocket s, InetSocketAddress a, InetAddress localHost, int localPort)
            throws IOException {
        try {
            if (localHost != null || localPort != 0) {
                s.bind(new InetSocketAddress(localHost, localPort));
            }
            s.connect(a, 0);
            return s;
        } catch (IOException | RuntimeException e) {
            s.close();
            throw e;
        }
    }

    @Override
    public Socket createSocket(Socket s, String host, int port, boolean autoClose) throws IOException {
        if (s == null || !s.isConnected()) {
            throw new java.net.SocketException("the underlying socket is not connected");
        }
        return new LayeredSslSocket(ctx, s, host, port, autoClose);
    }

    @Override
    public Socket createSocket(Socket s, InputStream consumed, boolean autoClose) throws IOException {
        if (s == null || !s.isConnected()) {
            throw new java.net.SocketException("the underlying socket is not connected");
        }
        return new LayeredSslSocket(ctx, s, consumed, autoClose);
    }
}
