package org.tlsbridge.test;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;

/** A loopback server that accepts connections and runs an exchange on a server engine for each. */
public final class OneShotServer implements AutoCloseable {
    /** What to do with one accepted, handshaked connection. */
    public interface Exchange {
        void run(EngineChannel c) throws Exception;
    }

    private final ServerSocketChannel ss;
    public final int port;

    public OneShotServer() throws java.io.IOException {
        ss = ServerSocketChannel.open();
        ss.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        port = ((InetSocketAddress) ss.getLocalAddress()).getPort();
    }

    /** Serves `count` connections in turn on a background thread. */
    public CompletableFuture<Void> serve(SSLContext ctx, int count, boolean direct, Consumer<SSLEngine> setup,
            Exchange x) {
        // A thread of its own: the common pool has one thread on a 2-core machine.
        return CompletableFuture.runAsync(() -> {
            for (int i = 0; i < count; i++) {
                try (SocketChannel s = ss.accept()) {
                    SSLEngine e = ctx.createSSLEngine();
                    e.setUseClientMode(false);
                    if (setup != null) {
                        setup.accept(e);
                    }
                    try (EngineChannel c = new EngineChannel(e, s, direct)) {
                        c.handshake();
                        x.run(c);
                    }
                } catch (Exception ex) {
                    throw new RuntimeException(ex);
                }
            }
        }, r -> {
            Thread t = new Thread(r, "one-shot-server");
            t.setDaemon(true);
            t.start();
        });
    }

    @Override
    public void close() throws java.io.IOException {
        ss.close();
    }
}
