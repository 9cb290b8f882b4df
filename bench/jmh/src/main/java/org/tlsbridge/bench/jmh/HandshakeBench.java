package org.tlsbridge.bench.jmh;

import java.util.concurrent.TimeUnit;
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
 * AES-128-GCM where the engine takes a TLS 1.3 suite list, its defaults
 * (checked to be AES-128-GCM too) where it does not.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class HandshakeBench {
    @Param({"TLSBridge", "SunJSSE", "Conscrypt", "SunJSSE-ACCP", "Netty-OpenSSL", "wildfly-openssl"})
    public String provider;

    @Param({"rsa", "ec"})
    public String key;

    private Engines engines;
    private String[] suites;

    @Setup(Level.Trial)
    public void setup() throws Exception {
        engines = Engines.of(provider, key);
        suites = engines.pinsTls13() ? new String[] {Engines.SUITE} : null;
        long first;
        try (MemoryPair p = new MemoryPair(engines, false, suites)) {
            engines.verify(p.client, "client");
            engines.verify(p.server, "server");
            p.handshake();
            String proto = p.server.getSession().getProtocol();
            String suite = p.server.getSession().getCipherSuite();
            if (!proto.equals("TLSv1.3") || !suite.equals(Engines.SUITE)) {
                throw new IllegalStateException(provider + " negotiated " + proto + " " + suite);
            }
            first = p.serverBytes;
        }
        // a resumed handshake sends no certificate: a second one as large as
        // the first shows the engines did not resume
        try (MemoryPair p = new MemoryPair(engines, false, suites)) {
            p.handshake();
            if (p.serverBytes < first * 9 / 10) {
                throw new IllegalStateException(provider + " resumed: the server sent " + p.serverBytes
                        + " bytes, " + first + " in the first handshake");
            }
            System.out.println("BENCH-HANDSHAKE " + provider + " " + key + " server bytes " + first + " "
                    + p.serverBytes);
        }
    }

    @Benchmark
    public Object handshake() throws Exception {
        try (MemoryPair p = new MemoryPair(engines, false, suites)) {
            p.handshake();
            return p;
        }
    }
}
