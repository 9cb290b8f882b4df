package org.tlsbridge.bench.jmh;

import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Full TLS 1.3 handshakes per second between a client and a server engine of
 * the same provider, in memory: key exchange, signature with the server's
 * RSA-2048 or ECDSA P-256 key, chain verification on the client, tickets.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class HandshakeBench {
    @Param({"TLSBridge", "SunJSSE"})
    public String provider;

    @Param({"rsa", "ec"})
    public String key;

    private SSLContext client;
    private SSLContext server;

    @Setup(Level.Trial)
    public void setup() throws Exception {
        client = Pki.client(provider);
        server = Pki.server(provider, key);
        MemoryPair p = new MemoryPair(client, server, false, null);
        p.handshake();
        String proto = p.server.getSession().getProtocol();
        if (!proto.equals("TLSv1.3")) {
            throw new IllegalStateException("negotiated " + proto);
        }
    }

    @Benchmark
    public Object handshake() throws Exception {
        MemoryPair p = new MemoryPair(client, server, false, null);
        p.handshake();
        p.client.closeOutbound();
        p.server.closeOutbound();
        return p;
    }
}
