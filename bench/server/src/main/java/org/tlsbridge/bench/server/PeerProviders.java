package org.tlsbridge.bench.server;

import com.amazon.corretto.crypto.provider.AmazonCorrettoCryptoProvider;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.Provider;
import java.security.Security;
import java.security.Signature;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.crypto.Cipher;
import javax.crypto.KeyAgreement;
import javax.crypto.Mac;
import javax.net.ssl.SSLContext;
import org.conscrypt.Conscrypt;

/**
 * The peers a Java team would pick instead of tlsbridge, installed the way
 * their users install them, and proven active before the server listens: a
 * figure labelled "Conscrypt" or "ACCP" that silently ran on SunJSSE's own
 * code would compare nothing. The proof also goes to /_stats, so each cell
 * records which provider served it.
 */
final class PeerProviders {
    private PeerProviders() {
    }

    /** Conscrypt first: Tomcat's JSSEImplementation asks for SSLContext "TLS" with no provider. */
    static String conscrypt() throws Exception {
        if (!Conscrypt.isAvailable()) {
            throw new IllegalStateException("Conscrypt's native library did not load on this machine");
        }
        Provider p = Conscrypt.newProvider();
        Security.insertProviderAt(p, 1);
        String served = SSLContext.getInstance("TLS").getProvider().getName();
        if (!served.equals(p.getName())) {
            throw new IllegalStateException("SSLContext TLS is served by " + served + ", not Conscrypt");
        }
        Conscrypt.Version v = Conscrypt.version();
        return "{\"provider\":\"Conscrypt\",\"version\":\"" + v.major() + "." + v.minor() + "." + v.patch()
                + "\",\"sslcontext\":\"" + served + "\"}";
    }

    /**
     * ACCP as the highest-priority provider under SunJSSE: SunJSSE asks the
     * JCA for its ciphers, MACs, digests, key agreements and signatures
     * without naming a provider, so each must now come from ACCP.
     */
    static String accp() {
        AmazonCorrettoCryptoProvider.install();
        AmazonCorrettoCryptoProvider accp = AmazonCorrettoCryptoProvider.INSTANCE;
        // throws unless the native library loaded and its self-tests passed
        accp.assertHealthy();
        String first = Security.getProviders()[0].getName();
        if (!first.equals(accp.getName())) {
            throw new IllegalStateException("the first provider is " + first + ", not ACCP");
        }
        Map<String, String> who = new LinkedHashMap<>();
        who.put("SSLContext TLS", name(() -> SSLContext.getInstance("TLS").getProvider()));
        who.put("Cipher AES/GCM/NoPadding", name(() -> Cipher.getInstance("AES/GCM/NoPadding").getProvider()));
        who.put("Mac HmacSHA256", name(() -> Mac.getInstance("HmacSHA256").getProvider()));
        who.put("MessageDigest SHA-256", name(() -> MessageDigest.getInstance("SHA-256").getProvider()));
        who.put("KeyAgreement ECDH", name(() -> KeyAgreement.getInstance("ECDH").getProvider()));
        who.put("KeyAgreement XDH", name(() -> KeyAgreement.getInstance("XDH").getProvider()));
        who.put("KeyPairGenerator XDH", name(() -> KeyPairGenerator.getInstance("XDH").getProvider()));
        who.put("Signature RSASSA-PSS", name(() -> Signature.getInstance("RSASSA-PSS").getProvider()));
        if (!"SunJSSE".equals(who.get("SSLContext TLS"))) {
            throw new IllegalStateException("SSLContext TLS is served by " + who.get("SSLContext TLS") + ", not SunJSSE");
        }
        // the record layer's cipher is the one that must be ACCP's
        if (!accp.getName().equals(who.get("Cipher AES/GCM/NoPadding"))) {
            throw new IllegalStateException("AES/GCM is served by " + who.get("Cipher AES/GCM/NoPadding") + ", not ACCP");
        }
        StringBuilder sb = new StringBuilder("{\"provider\":\"SunJSSE + ACCP\",\"version\":\"")
                .append(accp.getVersionStr()).append("\",\"fips\":").append(accp.isFips())
                .append(",\"self_tests\":\"").append(accp.getSelfTestStatus()).append("\",\"served_by\":{");
        String sep = "";
        for (Map.Entry<String, String> e : who.entrySet()) {
            sb.append(sep).append('"').append(e.getKey()).append("\":\"").append(e.getValue()).append('"');
            sep = ",";
        }
        return sb.append("}}").toString();
    }

    /**
     * wildfly-openssl first: its provider serves SSLContext "TLS" from the
     * system's libssl, which its native part (libwfssl, shipped in its jar)
     * opens by the paths in org.wildfly.openssl.path.ssl / .crypto. Named by
     * class, so that nothing else compiling this server needs its jar.
     * Asking for the context loads the natives: a libwfssl that cannot run
     * on this OpenSSL fails here, before the server listens.
     */
    static String wildflyOpenssl() throws Exception {
        Class<?> c = Class.forName("org.wildfly.openssl.OpenSSLProvider");
        Provider p = (Provider) c.getField("INSTANCE").get(null);
        Security.insertProviderAt(p, 1);
        String served = SSLContext.getInstance("TLS").getProvider().getName();
        if (!served.equals(p.getName())) {
            throw new IllegalStateException("SSLContext TLS is served by " + served + ", not wildfly-openssl");
        }
        String version = c.getPackage().getImplementationVersion();
        return "{\"provider\":\"wildfly-openssl\",\"version\":\"" + version + "\",\"sslcontext\":\"" + served
                + "\",\"libssl\":\"" + System.getProperty("org.wildfly.openssl.path.ssl", "") + "\"}";
    }

    private interface Lookup {
        Provider get() throws Exception;
    }

    private static String name(Lookup l) {
        try {
            return l.get().getName();
        } catch (NoSuchAlgorithmException e) {
            return "none";
        } catch (Exception e) {
            return "error: " + e.getMessage();
        }
    }
}
