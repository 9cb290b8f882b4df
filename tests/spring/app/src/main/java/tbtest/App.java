package tbtest;

import jakarta.servlet.http.HttpServletRequest;
import java.lang.reflect.Field;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLSession;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The servlet application of tests/spring/run.sh (Tomcat or Jetty). GET /tls answers with what
 * the server saw of this connection: the class of its SSLSession (tlsbridge's
 * or the JDK's), protocol, cipher suite, HTTP version and client certificate.
 */
@SpringBootApplication
@RestController
public class App {
    public static void main(String[] args) {
        SpringApplication.run(App.class, args);
    }

    @GetMapping("/tls")
    public String tls(HttpServletRequest req) throws Exception {
        X509Certificate[] peer = (X509Certificate[]) req.getAttribute("jakarta.servlet.request.X509Certificate");
        return "session=" + sessionClass(req)
                + " protocol=" + protocol(req)
                + " cipher=" + req.getAttribute("jakarta.servlet.request.cipher_suite")
                + " http=" + req.getProtocol()
                + " peer=" + (peer == null ? "-" : peer[0].getSubjectX500Principal().getName()) + "\n";
    }

    /** Servlet 6.1 (Tomcat 11) names the attribute; Tomcat 10.1 has only its own. */
    private static Object protocol(HttpServletRequest req) {
        Object p = req.getAttribute("jakarta.servlet.request.secure_protocol");
        return p != null ? p : req.getAttribute("org.apache.tomcat.util.net.secure_protocol_version");
    }

    /**
     * The class of the connection's SSLSession: the one thing that tells, on
     * the server side, which provider served it. Jetty hands the request its
     * SslSessionData; Tomcat only its JSSESupport, whose session is read by
     * reflection (test code only).
     */
    private static String sessionClass(HttpServletRequest req) throws Exception {
        Object jetty = req.getAttribute("org.eclipse.jetty.io.Endpoint.SslSessionData");
        if (jetty != null) {
            // Jetty 12 hands out its SslSessionData, whose sslSession() is public API
            SSLSession s = (SSLSession) Class.forName("org.eclipse.jetty.io.EndPoint$SslSessionData")
                    .getMethod("sslSession").invoke(jetty);
            return s.getClass().getName();
        }
        Object mgr = req.getAttribute("jakarta.servlet.request.ssl_session_mgr");
        if (mgr == null) {
            return "none";
        }
        Field f = Class.forName("org.apache.tomcat.util.net.jsse.JSSESupport").getDeclaredField("session");
        f.setAccessible(true);
        SSLSession s = (SSLSession) f.get(mgr);
        return s == null ? "null" : s.getClass().getName();
    }
}
