package org.tlsbridge.socket;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.util.concurrent.CompletableFuture;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.Test;
import org.tlsbridge.test.Contexts;

class SocketSmokeTest {
    @Test
    void echo() throws Exception {
        SSLContext sc = Contexts.server(Contexts.TLSBRIDGE, "rsa");
        SSLContext cc = Contexts.client(Contexts.TLSBRIDGE);
        try (SSLServerSocket ss = (SSLServerSocket) sc.getServerSocketFactory().createServerSocket(0, 50,
                InetAddress.getLoopbackAddress())) {
            CompletableFuture<byte[]> got = CompletableFuture.supplyAsync(() -> {
                try (SSLSocket s = (SSLSocket) ss.accept()) {
                    InputStream in = s.getInputStream();
                    byte[] b = in.readNBytes(5);
                    s.getOutputStream().write(b);
                    return b;
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            try (SSLSocket c = (SSLSocket) cc.getSocketFactory().createSocket("localhost", ss.getLocalPort())) {
                OutputStream o = c.getOutputStream();
                o.write("hello".getBytes());
                byte[] back = c.getInputStream().readNBytes(5);
                assertArrayEquals("hello".getBytes(), back);
                assertEquals("TLSv1.3", c.getSession().getProtocol());
            }
            assertArrayEquals("hello".getBytes(), got.get());
        }
    }
}
