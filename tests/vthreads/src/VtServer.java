import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.Provider;
import java.security.Security;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;

/**
 * A virtual-thread-per-connection HTTPS server over an SSLServerSocket of
 * the given provider (TLSBridge or SunJSSE): the shape JDK 21+ servers take.
 * The accept loop runs on a platform thread or a virtual thread, as asked;
 * each connection is served on a new virtual thread (handshake, one
 * request, a reply, close). Prints "LISTENING port", then one "SESSION"
 * line for the first connection served (socket and session classes);
 * stops when its stdin closes.
 *
 *   java VtServer TLSBridge|SunJSSE server.p12 pass platform|virtual
 */
public final class VtServer {
    public static void main(String[] args) throws Exception {
        Provider p = args[0].equals("TLSBridge") ? VtCommon.tlsbridge() : Security.getProvider(args[0]);
        SSLContext ctx = SSLContext.getInstance("TLS", p);
        ctx.init(VtCommon.keyManagers(args[1], args[2]), null, null);
        ServerSocket server = ctx.getServerSocketFactory().createServerSocket(0, 1024, InetAddress.getLoopbackAddress());
        AtomicInteger served = new AtomicInteger();
        AtomicInteger errors = new AtomicInteger();
        Runnable acceptLoop = () -> {
            for (;;) {
                Socket s;
                try {
                    s = server.accept();
                } catch (Exception e) {
                    if (!server.isClosed()) {
                        System.out.println("ACCEPT-FAILED " + e);
                    }
                    return;
                }
                Thread.ofVirtual().start(() -> serve(s, served, errors));
            }
        };
        Thread acceptor = args[3].equals("virtual") ? Thread.ofVirtual().unstarted(acceptLoop)
                : Thread.ofPlatform().daemon().unstarted(acceptLoop);
        acceptor.start();
        System.out.println("LISTENING " + server.getLocalPort() + " " + server.getClass().getName()
                + " accept-on=" + args[3]);
        System.in.read(new byte[1]);
        System.out.println("STATS served=" + served.get() + " errors=" + errors.get());
        server.close();
        System.exit(0);
    }

    private static void serve(Socket s, AtomicInteger served, AtomicInteger errors) {
        try (s) {
            s.setSoTimeout(60_000);
            InputStream in = s.getInputStream();
            ByteArrayOutputStream head = new ByteArrayOutputStream();
            int c;
            while ((c = in.read()) >= 0) {
                head.write(c);
                byte[] h = head.toByteArray();
                int n = h.length;
                if (n >= 4 && h[n - 4] == '\r' && h[n - 3] == '\n' && h[n - 2] == '\r' && h[n - 1] == '\n') {
                    break;
                }
            }
            if (c < 0) {
                return; // an idle client that went away
            }
            if (served.incrementAndGet() == 1) {
                SSLSocket ssl = (SSLSocket) s;
                System.out.println("SESSION socket=" + s.getClass().getName() + " session="
                        + ssl.getSession().getClass().getName() + " protocol=" + ssl.getSession().getProtocol()
                        + " on " + (Thread.currentThread().isVirtual() ? "virtual" : "platform") + " thread");
            }
            OutputStream out = s.getOutputStream();
            out.write("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n"
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
        } catch (Exception e) {
            errors.incrementAndGet();
        }
    }
}
