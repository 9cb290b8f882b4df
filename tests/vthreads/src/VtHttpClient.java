import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;

/**
 * Java's HttpClient (HTTP/1.1) against https://127.0.0.1:port/ over one TLS
 * version: `n` requests at once from one client, all within `deadline`
 * seconds, each answered "ok" over that TLS version. Prints
 * "HTTPCLIENT proto ok=N/n ..." with latencies min/median/max in ms.
 *
 *   java VtHttpClient port TLSv1.2|TLSv1.3 n deadlineSeconds
 */
public final class VtHttpClient {
    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        String proto = args[1];
        int n = Integer.parseInt(args[2]);
        long deadline = Long.parseLong(args[3]);
        SSLContext ctx = VtCommon.trustingClient(null);
        SSLParameters params = new SSLParameters();
        params.setProtocols(new String[] {proto});
        URI uri = URI.create("https://127.0.0.1:" + port + "/");
        List<CompletableFuture<Long>> fs = new ArrayList<>();
        // one client: HTTP/1.1 opens a connection per request in flight
        HttpClient c = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).sslContext(ctx)
                .sslParameters(params).connectTimeout(Duration.ofSeconds(deadline)).build();
        for (int i = 0; i < n; i++) {
            long t0 = System.nanoTime();
            fs.add(c.sendAsync(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(deadline)).build(),
                    HttpResponse.BodyHandlers.ofString()).thenApply(r -> {
                        if (r.statusCode() != 200 || !r.body().equals("ok\n")
                                || !r.sslSession().map(s -> s.getProtocol().equals(proto)).orElse(false)) {
                            throw new IllegalStateException("bad reply " + r.statusCode() + " " + r.body()
                                    + " " + r.sslSession().map(s -> s.getProtocol()).orElse("no TLS"));
                        }
                        return (System.nanoTime() - t0) / 1_000_000;
                    }));
        }
        VtCommon.Latencies r = VtCommon.Latencies.await(fs, System.currentTimeMillis() + deadline * 1000);
        System.out.println("HTTPCLIENT " + proto + " ok=" + r.ms().length + "/" + n + r.summary());
        c.shutdownNow();
        System.exit(0);
    }
}
