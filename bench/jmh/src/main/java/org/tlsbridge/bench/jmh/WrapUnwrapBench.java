package org.tlsbridge.bench.jmh;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLException;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * One operation = the client wraps {@code size} bytes and the server unwraps
 * them, both engines of the same provider, after one TLS 1.3
 * AES-128-GCM handshake. This is the steady-state record cost a server pays
 * per request in each direction. The provider values beyond TLSBridge and
 * SunJSSE are the engines users pick instead (Engines); the runner measures
 * them at 1 KiB only.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class WrapUnwrapBench {
    @Param({"TLSBridge", "SunJSSE", "Conscrypt", "SunJSSE-ACCP", "Netty-OpenSSL", "wildfly-openssl"})
    public String provider;

    @Param({"64", "1024", "16384"})
    public int size;

    @Param({"heap", "direct"})
    public String buffers;

    private MemoryPair pair;
    private ByteBuffer src;
    private ByteBuffer dst;

    @Setup(Level.Trial)
    public void setup() throws Exception {
        boolean direct = buffers.equals("direct");
        Engines engines = Engines.of(provider, "rsa");
        pair = new MemoryPair(engines, direct, engines.pinsTls13() ? new String[] {Engines.SUITE} : null);
        engines.verify(pair.client, "client");
        engines.verify(pair.server, "server");
        pair.handshake();
        String suite = pair.server.getSession().getCipherSuite();
        if (!suite.equals(Engines.SUITE)) {
            throw new IllegalStateException(provider + " negotiated " + suite + ", not " + Engines.SUITE);
        }
        src = MemoryPair.alloc(direct, size);
        while (src.hasRemaining()) {
            src.put((byte) 'a');
        }
        dst = MemoryPair.alloc(direct, Math.max(size, pair.server.getSession().getApplicationBufferSize()));
        // drain tickets the server sent after the handshake
        pair.transfer(src.flip(), dst);
    }

    @Benchmark
    public int wrapUnwrap() throws SSLException {
        src.rewind();
        return pair.transfer(src, dst);
    }

    @TearDown(Level.Trial)
    public void close() {
        pair.close();
    }
}
