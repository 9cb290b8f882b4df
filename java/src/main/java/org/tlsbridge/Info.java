package org.tlsbridge;

import java.nio.ByteBuffer;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import org.tlsbridge.internal.NativeLibrary;
import org.tlsbridge.internal.RecordSealing;

/**
 * {@code java -jar tlsbridge.jar}: prints the versions, which OpenSSL flavour
 * serves and where the native library came from, then makes a ClientHello to prove the library works.
 */
public final class Info {
    private Info() {
    }

    public static void main(String[] args) throws Exception {
        System.out.println("tlsbridge " + TlsBridgeProvider.tlsbridgeVersion());
        System.out.println("java " + System.getProperty("java.version") + " (" + System.getProperty("java.vendor")
                + ")");
        if (!TlsBridgeProvider.isAvailable()) {
            try {
                TlsBridgeProvider.openSslVersion();
            } catch (Throwable t) {
                System.out.println("native library: NOT AVAILABLE: " + t.getMessage());
            }
            System.exit(1);
        }
        System.out.println("openssl " + TlsBridgeProvider.openSslVersion() + " (" + NativeLibrary.flavour()
                + "; -Dtlsbridge.openssl=bundled|system chooses)");
        System.out.println("native library " + TlsBridgeProvider.nativeLibraryPath());
        System.out.println(RecordSealing.describe());
        SSLContext ctx = SSLContext.getInstance("TLS", new TlsBridgeProvider());
        ctx.init(null, null, null);
        SSLEngine e = ctx.createSSLEngine("example.org", 443);
        e.setUseClientMode(true);
        ByteBuffer out = ByteBuffer.allocate(e.getSession().getPacketBufferSize());
        SSLEngineResult r = e.wrap(ByteBuffer.allocate(0), out);
        System.out.println("self-test: ClientHello of " + r.bytesProduced() + " bytes, " + r.getHandshakeStatus());
        System.out.println("provider " + ctx.getProvider().getName() + ", SSLContext protocols "
                + String.join(",", ctx.getSupportedSSLParameters().getProtocols()));
    }
}
