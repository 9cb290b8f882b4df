package tbtest;

import java.io.FileInputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.security.KeyStore;
import java.security.Provider;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.ServiceLoader;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.TrustManagerFactory;

/**
 * Java's HttpClient with TLS by tlsbridge (found through ServiceLoader, so
 * this app needs no compile-time dependency on it):
 *   Client URL CA.pem HTTP_1_1|HTTP_2 TLSv1.2|TLSv1.3 [client.p12 password]
 * prints the response body, or exits 1.
 */
public class Client {
    public static void main(String[] a) throws Exception {
        Provider tb = null;
        for (Provider p : ServiceLoader.load(Provider.class)) {
            if (p.getName().equals("TLSBridge")) {
                tb = p;
            }
        }
        if (tb == null) {
            throw new IllegalStateException("no TLSBridge provider on the class path");
        }
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        try (FileInputStream in = new FileInputStream(a[1])) {
            trust.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance("PKIX");
        tmf.init(trust);
        KeyManagerFactory kmf = null;
        if (a.length > 5) {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            try (FileInputStream in = new FileInputStream(a[4])) {
                ks.load(in, a[5].toCharArray());
            }
            kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(ks, a[5].toCharArray());
        }
        SSLContext ctx = SSLContext.getInstance("TLS", tb);
        ctx.init(kmf == null ? null : kmf.getKeyManagers(), tmf.getTrustManagers(), null);
        SSLParameters params = new SSLParameters();
        params.setProtocols(new String[] {a[3]});
        HttpClient client = HttpClient.newBuilder().sslContext(ctx).sslParameters(params)
                .version(HttpClient.Version.valueOf(a[2])).connectTimeout(Duration.ofSeconds(10)).build();
        HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create(a[0]))
                .timeout(Duration.ofSeconds(20)).build(), HttpResponse.BodyHandlers.ofString());
        System.out.print("status=" + r.statusCode() + " client-http=" + r.version() + " " + r.body());
    }
}
