package org.tlsbridge.context;

import java.net.Socket;
import java.security.cert.CertificateEncodingException;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedTrustManager;
import javax.net.ssl.X509TrustManager;
import org.tlsbridge.internal.Native;

/**
 * Peer certificates are judged by the application's TrustManager, never by
 * OpenSSL's store, with the authType SunJSSE would pass. A plain
 * X509TrustManager does not check identity, so for it the endpoint
 * identification SSLParameters ask for is done here (OpenSSL's RFC 6125
 * matcher), as SunJSSE's wrapper does.
 */
public final class TrustBridge {
    private final X509TrustManager tm;

    TrustBridge(X509TrustManager tm) {
        this.tm = tm;
    }

    public X509TrustManager trustManager() {
        return tm;
    }

    /** authType for checkServerTrusted: "UNKNOWN" in TLS 1.3, the key exchange in 1.2. */
    public static String serverAuthType(String protocol, String suite) {
        if ("TLSv1.3".equals(protocol) || suite == null) {
            return "UNKNOWN";
        }
        int w = suite.indexOf("_WITH_");
        if (suite.startsWith("TLS_") && w > 4) {
            return suite.substring(4, w);
        }
        return "UNKNOWN";
    }

    /** authType for checkClientTrusted: the client key's algorithm. */
    public static String clientAuthType(X509Certificate leaf) {
        String a = leaf.getPublicKey().getAlgorithm();
        switch (a) {
            case "RSA":
            case "DSA":
            case "EC":
            case "RSASSA-PSS":
                return a;
            default:
                return "UNKNOWN";
        }
    }

    public void checkServer(X509Certificate[] chain, String authType, SSLEngine engine, Socket socket,
            String identityAlgorithm, String host) throws CertificateException {
        if (tm instanceof X509ExtendedTrustManager) {
            X509ExtendedTrustManager x = (X509ExtendedTrustManager) tm;
            if (engine != null) {
                x.checkServerTrusted(chain, authType, engine);
            } else {
                x.checkServerTrusted(chain, authType, socket);
            }
            return;
        }
        tm.checkServerTrusted(chain, authType);
        checkIdentity(chain[0], identityAlgorithm, host);
    }

    public void checkClient(X509Certificate[] chain, String authType, SSLEngine engine, Socket socket)
            throws CertificateException {
        if (tm instanceof X509ExtendedTrustManager) {
            X509ExtendedTrustManager x = (X509ExtendedTrustManager) tm;
            if (engine != null) {
                x.checkClientTrusted(chain, authType, engine);
            } else {
                x.checkClientTrusted(chain, authType, socket);
            }
            return;
        }
        tm.checkClientTrusted(chain, authType);
    }

    static void checkIdentity(X509Certificate leaf, String algorithm, String host) throws CertificateException {
        if (algorithm == null || algorithm.isEmpty()) {
            return;
        }
        if (!"HTTPS".equalsIgnoreCase(algorithm) && !"LDAPS".equalsIgnoreCase(algorithm)) {
            throw new CertificateException("unknown endpoint identification algorithm: " + algorithm);
        }
        if (host == null || host.isEmpty()) {
            throw new CertificateException("endpoint identification requested but the peer host is unknown");
        }
        String h = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
        boolean ip = isIpLiteral(h);
        int rc;
        try {
            rc = Native.checkHost(leaf.getEncoded(), h, ip);
        } catch (CertificateEncodingException e) {
            throw new CertificateException(e);
        }
        if (rc != 1) {
            throw new CertificateException("No subject alternative " + (ip ? "IP address" : "DNS name")
                    + " matching " + h + " found.");
        }
    }

    static boolean isIpLiteral(String h) {
        if (h.indexOf(':') >= 0) {
            return true;
        }
        return h.matches("\\d{1,3}(\\.\\d{1,3}){3}");
    }
}
