import io.helidon.common.tls.Tls;
import io.helidon.webserver.WebServer;
import java.net.Socket;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509KeyManager;

/**
 * Helidon 4 SE's web server (each connection on a virtual thread) with TLS
 * from a tlsbridge SSLContext. GET / answers "ok". The key manager reports,
 * once per TLS version, which SSLSocket or SSLEngine and which session class
 * the server's handshake runs on ("SESSION ..." lines), so the run shows
 * tlsbridge served. Prints "LISTENING port"; stops when stdin closes.
 *
 *   java VtHelidon server.p12 pass
 */
public final class VtHelidon {
    public static void main(String[] args) throws Exception {
        SSLContext ctx = SSLContext.getInstance("TLS", VtCommon.tlsbridge());
        ctx.init(new javax.net.ssl.KeyManager[] {new Reporting((X509KeyManager) VtCommon.keyManagers(args[0], args[1])[0])},
                null, null);
        WebServer server = WebServer.builder()
                .host("127.0.0.1")
                .port(0)
                .tls(Tls.builder().sslContext(ctx).build())
                .routing(r -> r.get("/", (req, res) -> res.send("ok\n")))
                .build()
                .start();
        System.out.println("LISTENING " + server.port() + " provider=" + ctx.getProvider().getName());
        System.in.read(new byte[1]);
        server.stop();
        System.exit(0);
    }

    /** Delegates; tells once per protocol what the server's handshake runs on. */
    static final class Reporting extends X509ExtendedKeyManager {
        private final X509KeyManager km;
        private final AtomicBoolean tls12 = new AtomicBoolean();
        private final AtomicBoolean tls13 = new AtomicBoolean();

        Reporting(X509KeyManager km) {
            this.km = km;
        }

        private void report(Object on, javax.net.ssl.SSLSession hs) {
            String proto = hs == null ? "?" : hs.getProtocol();
            AtomicBoolean once = "TLSv1.2".equals(proto) ? tls12 : tls13;
            if (once.compareAndSet(false, true)) {
                System.out.println("SESSION " + proto + " on=" + on.getClass().getName() + " session="
                        + (hs == null ? null : hs.getClass().getName()) + " on "
                        + (Thread.currentThread().isVirtual() ? "virtual" : "platform") + " thread");
            }
        }

        @Override
        public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
            if (socket instanceof SSLSocket s) {
                report(s, s.getHandshakeSession());
            }
            return km.chooseServerAlias(keyType, issuers, socket);
        }

        @Override
        public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
            report(engine, engine.getHandshakeSession());
            return km instanceof X509ExtendedKeyManager x ? x.chooseEngineServerAlias(keyType, issuers, engine)
                    : km.chooseServerAlias(keyType, issuers, null);
        }

        @Override
        public String[] getClientAliases(String keyType, Principal[] issuers) {
            return km.getClientAliases(keyType, issuers);
        }

        @Override
        public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
            return km.chooseClientAlias(keyType, issuers, socket);
        }

        @Override
        public String[] getServerAliases(String keyType, Principal[] issuers) {
            return km.getServerAliases(keyType, issuers);
        }

        @Override
        public X509Certificate[] getCertificateChain(String alias) {
            return km.getCertificateChain(alias);
        }

        @Override
        public PrivateKey getPrivateKey(String alias) {
            return km.getPrivateKey(alias);
        }
    }
}
