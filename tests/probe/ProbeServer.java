import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import java.io.FileInputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.security.KeyStore;
import java.security.Provider;
import java.security.Security;
import java.util.concurrent.Executors;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;

/**
 * A keep-alive HTTPS server for the probe's tests: jdk.httpserver over
 * SSLEngine, so the same program runs on SunJSSE or on tlsbridge.
 *
 * <pre>java ProbeServer.java KEYSTORE PASSWORD BODY_BYTES [sunjsse|tlsbridge]</pre>
 *
 * Binds 127.0.0.1 on an ephemeral port, prints "port N" (and, for
 * tlsbridge, the loaded library path) and serves until stdin closes.
 */
public final class ProbeServer {
    public static void main(String[] args) throws Exception {
        String provider = args.length > 3 ? args[3] : "sunjsse";
        byte[] body = new byte[Integer.parseInt(args[2])];
        java.util.Arrays.fill(body, (byte) 'a');
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = new FileInputStream(args[0])) {
            ks.load(in, args[1].toCharArray());
        }
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, args[1].toCharArray());
        SSLContext ctx;
        if (provider.equals("tlsbridge")) {
            Provider p = (Provider) Class.forName("org.tlsbridge.TlsBridgeProvider")
                    .getDeclaredConstructor().newInstance();
            Security.insertProviderAt(p, 1);
            ctx = SSLContext.getInstance("TLS", p);
        } else {
            ctx = SSLContext.getInstance("TLS", "SunJSSE");
        }
        ctx.init(kmf.getKeyManagers(), null, null);

        HttpsServer server = HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
        server.setHttpsConfigurator(new HttpsConfigurator(ctx));
        server.setExecutor(Executors.newFixedThreadPool(2));
        server.createContext("/", ex -> {
            try (InputStream in = ex.getRequestBody()) {
                in.readAllBytes();
            }
            ex.getResponseHeaders().set("Content-Type", "text/plain");
            ex.sendResponseHeaders(200, body.length);
            try (OutputStream out = ex.getResponseBody()) {
                out.write(body);
            }
        });
        server.start();
        System.out.println("port " + server.getAddress().getPort());
        System.out.println("provider " + ctx.getProvider().getName());
        System.out.flush();
        while (System.in.read() >= 0) {
            // serve until the test closes our stdin
        }
        server.stop(0);
        System.exit(0);
    }
}
