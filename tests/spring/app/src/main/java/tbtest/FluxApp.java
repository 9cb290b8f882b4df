package tbtest;

import io.netty.channel.Channel;
import io.netty.handler.ssl.SslHandler;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLSession;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.http.server.reactive.SslInfo;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.netty.Connection;
import reactor.netty.http.server.HttpServerRequest;

/**
 * The WebFlux application of tests/spring/run.sh (Reactor Netty), compiled in
 * place of App with -Dboot.server=netty. GET /tls answers like App's: the
 * class of the connection's server-side SSLSession, read from the SslHandler
 * of its Netty channel (an h2 stream's parent channel holds it), protocol,
 * cipher suite, HTTP version and client certificate.
 */
@SpringBootApplication
@RestController
public class FluxApp {
    public static void main(String[] args) {
        SpringApplication.run(FluxApp.class, args);
    }

    @GetMapping("/tls")
    public String tls(ServerHttpRequest req) {
        HttpServerRequest nreq = ServerHttpRequestDecorator.getNativeRequest(req);
        SSLSession s = null;
        for (Channel c = ((Connection) nreq).channel(); c != null && s == null; c = c.parent()) {
            SslHandler h = c.pipeline().get(SslHandler.class);
            s = h == null ? null : h.engine().getSession();
        }
        SslInfo info = req.getSslInfo();
        X509Certificate[] peer = info == null ? null : info.getPeerCertificates();
        return "session=" + (s == null ? "none" : s.getClass().getName())
                + " protocol=" + (s == null ? "-" : s.getProtocol())
                + " cipher=" + (s == null ? "-" : s.getCipherSuite())
                + " http=" + nreq.version().text()
                + " peer=" + (peer == null || peer.length == 0 ? "-" : peer[0].getSubjectX500Principal().getName()) + "\n";
    }
}
