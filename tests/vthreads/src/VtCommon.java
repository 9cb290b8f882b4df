import java.io.FileInputStream;
import java.io.InputStream;
import java.security.KeyStore;
import java.security.Provider;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;

/** What the Vt* programs share: the provider, the server's key and a client that trusts the throw-away certificate. */
final class VtCommon {
    private VtCommon() {
    }

    /** tlsbridge's provider, loaded by name so this compiles and runs from the class path alone. */
    static Provider tlsbridge() throws Exception {
        return (Provider) Class.forName("org.tlsbridge.TlsBridgeProvider").getDeclaredConstructor().newInstance();
    }

    /** The key managers for a PKCS#12 file whose store and key share one password. */
    static KeyManager[] keyManagers(String p12, String pass) throws Exception {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = new FileInputStream(p12)) {
            ks.load(in, pass.toCharArray());
        }
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, pass.toCharArray());
        return kmf.getKeyManagers();
    }

    /**
     * A client context (of the given provider, or the JVM's default when null)
     * that accepts any server certificate: the suite's server key is made
     * fresh for each run, and the tests are about threads, not trust.
     */
    static SSLContext trustingClient(Provider p) throws Exception {
        SSLContext ctx = p == null ? SSLContext.getInstance("TLS") : SSLContext.getInstance("TLS", p);
        ctx.init(null, new TrustManager[] {new X509TrustManager() {
            public void checkClientTrusted(X509Certificate[] c, String a) {
            }

            public void checkServerTrusted(X509Certificate[] c, String a) {
            }

            public X509Certificate[] getAcceptedIssuers() {
                return new X509Certificate[0];
            }
        }}, null);
        return ctx;
    }

    /** Sorted latencies in ms of the requests that succeeded, and the first failure (null if none). */
    record Latencies(long[] ms, String firstError) {
        /** Waits for every request until endMillis; one that failed or is still running is cancelled. */
        static Latencies await(List<? extends Future<Long>> requests, long endMillis) {
            List<Long> ms = new ArrayList<>();
            String firstError = null;
            for (Future<Long> f : requests) {
                try {
                    ms.add(f.get(Math.max(1, endMillis - System.currentTimeMillis()), TimeUnit.MILLISECONDS));
                } catch (Exception e) {
                    f.cancel(true);
                    if (firstError == null) {
                        firstError = String.valueOf(e.getCause() != null ? e.getCause() : e);
                    }
                }
            }
            return new Latencies(ms.stream().mapToLong(Long::longValue).sorted().toArray(), firstError);
        }

        /** " latency_ms min/median/max=a/b/c first_error=..." (each part only when there is one). */
        String summary() {
            return (ms.length > 0 ? " latency_ms min/median/max=" + ms[0] + "/" + ms[ms.length / 2] + "/" + ms[ms.length - 1] : "")
                    + (firstError != null ? " first_error=" + firstError : "");
        }
    }
}
