package org.tlsbridge.socket;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import javax.net.ssl.SSLServerSocketFactory;
import org.tlsbridge.context.ContextState;

/** SSLServerSocketFactory of a tlsbridge SSLContext: listening sockets owned natively. */
public final class TlsBridgeServerSocketFactory extends SSLServerSocketFactory {
    private final ContextState ctx;

    public TlsBridgeServerSocketFactory(ContextState ctx) {
        this.ctx = ctx;
    }

    @Override
    public String[] getDefaultCipherSuites() {
        return ctx.defaultCipherSuites(false);
    }

    @Override
    public String[] getSupportedCipherSuites() {
        return ctx.suites().supported();
    }

    @Override
    public ServerSocket createServerSocket() throws IOException {
        return new TlsBridgeServerSocket(ctx);
    }

    @Override
    public ServerSocket createServerSocket(int port) throws IOException {
        return createServerSocket(port, 50, null);
    }

    @Override
    public ServerSocket createServerSocket(int port, int backlog) throws IOException {
        return createServerSocket(port, backlog, null);
    }

    @Override
    public ServerSocket createServerSocket(int port, int backlog, InetAddress ifAddress) throws IOException {
        if (port < 0 || port > 0xFFFF) {
            throw new IllegalArgumentException("Port value out of range: " + port);
        }
        TlsBridgeServerSocket s = new TlsBridgeServerSocket(ctx);
        s.bind(new InetSocketAddress(ifAddress, port), backlog);
        return s;
    }
}
