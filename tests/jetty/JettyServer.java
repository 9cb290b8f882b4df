// Stock embedded Jetty 12 for tests/jetty/run.sh, run by the java source
// launcher against whichever Jetty version is on the class path: the stock
// ALPN connector (ALPNServerConnectionFactory, h2 then http/1.1) over
// SslContextFactory.Server.setProvider("TLSBridge"), SecureRequestCustomizer
// with its SNI host check on. Jetty itself must find tlsbridge's ALPN
// processor through ServiceLoader; nothing here names it.
//
//   java -cp tlsbridge.jar:JETTY-CLASSPATH JettyServer.java PKI-DIR DOWNLOAD-FILE
// prints "READY <port> <client-auth-port>" once both connectors listen on 127.0.0.1.
//   GET  /info      the connection as the server sees it (HTTP version, ALPN, TLS, resumption, client)
//   GET  /download  DOWNLOAD-FILE
//   PUT  /upload    "sha256=<hex> bytes=<n>" of the request body
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.Security;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.HexFormat;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;
import org.eclipse.jetty.alpn.server.ALPNServerConnectionFactory;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http2.server.HTTP2ServerConnectionFactory;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.io.ssl.SslConnection;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.SecureRequestCustomizer;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.tlsbridge.TlsBridgeProvider;

public final class JettyServer {
    static final String PASSWORD = "suite-secret";

    public static void main(String[] args) throws Exception {
        Path pki = Path.of(args[0]);
        Path download = Path.of(args[1]);
        Security.addProvider(new TlsBridgeProvider());
        Server server = new Server();
        ServerConnector plain = connector(server, pki, false);
        ServerConnector needAuth = connector(server, pki, true);
        server.addConnector(plain);
        server.addConnector(needAuth);
        server.setHandler(new Handler.Abstract() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) throws Exception {
                String path = request.getHttpURI().getPath();
                switch (path) {
                    case "/info" -> text(response, callback, info(request));
                    case "/upload" -> {
                        MessageDigest sha = MessageDigest.getInstance("SHA-256");
                        long n = 0;
                        byte[] buf = new byte[64 * 1024];
                        try (InputStream in = Content.Source.asInputStream(request)) {
                            for (int r; (r = in.read(buf)) > 0; n += r) {
                                sha.update(buf, 0, r);
                            }
                        }
                        text(response, callback, "sha256=" + HexFormat.of().formatHex(sha.digest()) + " bytes=" + n + "\n");
                    }
                    case "/download" -> {
                        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, Files.size(download));
                        try (OutputStream out = Content.Sink.asOutputStream(response)) {
                            Files.copy(download, out);
                        }
                        callback.succeeded();
                    }
                    default -> {
                        return false;
                    }
                }
                return true;
            }
        });
        server.start();
        System.out.println("READY " + plain.getLocalPort() + " " + needAuth.getLocalPort());
        System.out.flush();
        server.join();
    }

    static ServerConnector connector(Server server, Path pki, boolean needClientAuth) {
        SslContextFactory.Server tls = new SslContextFactory.Server();
        tls.setProvider("TLSBridge");
        tls.setKeyStorePath(pki.resolve("server.p12").toString());
        tls.setKeyStorePassword(PASSWORD);
        tls.setKeyStoreType("PKCS12");
        if (needClientAuth) {
            tls.setTrustStorePath(pki.resolve("trust.p12").toString());
            tls.setTrustStorePassword(PASSWORD);
            tls.setTrustStoreType("PKCS12");
            tls.setNeedClientAuth(true);
        }
        HttpConfiguration config = new HttpConfiguration();
        config.addCustomizer(new SecureRequestCustomizer());
        HttpConnectionFactory http11 = new HttpConnectionFactory(config);
        HTTP2ServerConnectionFactory h2 = new HTTP2ServerConnectionFactory(config);
        ALPNServerConnectionFactory alpn = new ALPNServerConnectionFactory();
        alpn.setDefaultProtocol(http11.getProtocol());
        ServerConnector c = new ServerConnector(server, new SslConnectionFactory(tls, alpn.getProtocol()), alpn, h2, http11);
        c.setHost("127.0.0.1");
        c.setPort(0);
        return c;
    }

    static String info(Request request) throws Exception {
        SSLEngine engine = ((SslConnection.SslEndPoint) request.getConnectionMetaData().getConnection().getEndPoint())
                .getSslConnection().getSSLEngine();
        SSLSession s = engine.getSession();
        String alpn = engine.getApplicationProtocol();
        String client = "-";
        try {
            Certificate[] peer = s.getPeerCertificates();
            client = ((X509Certificate) peer[0]).getSubjectX500Principal().getName();
        } catch (SSLPeerUnverifiedException none) {
            // no client certificate on this connection
        }
        return "http=" + request.getConnectionMetaData().getHttpVersion().asString()
                + " alpn=" + (alpn == null || alpn.isEmpty() ? "none" : alpn)
                + " tls=" + s.getProtocol() + " resumed=" + TlsBridgeProvider.isResumed(s)
                + " engine=" + engine.getClass().getName() + " client=" + client + "\n";
    }

    static void text(Response response, Callback callback, String body) {
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain; charset=utf-8");
        response.write(true, ByteBuffer.wrap(body.getBytes(StandardCharsets.UTF_8)), callback);
    }
}
