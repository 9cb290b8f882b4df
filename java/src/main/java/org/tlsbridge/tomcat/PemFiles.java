package org.tlsbridge.tomcat;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.tomcat.util.file.ConfigFileLoader;
import org.apache.tomcat.util.file.ConfigurationSource;
import org.tlsbridge.internal.Native;
import org.tlsbridge.internal.NativeLibrary;

/**
 * PEM keys and certificates named by Tomcat's configuration, decoded by
 * OpenSSL (every key format and encryption it knows) and turned into the
 * Java objects a KeyManager or TrustManager is built from.
 */
final class PemFiles {
    /** Key algorithms tried in turn on the PKCS#8 bytes OpenSSL returns. */
    private static final String[] KEY_ALGORITHMS = {"RSA", "EC", "RSASSA-PSS", "EdDSA", "DSA"};

    private PemFiles() {
    }

    /** A one-entry in-memory key store: the key, then certificateFile's and certificateChainFile's certificates. */
    static KeyStore keyStore(String alias, String keyFile, String certFile, String chainFile, String password,
            char[] storePassword) throws IOException, GeneralSecurityException {
        PrivateKey key = privateKey(keyFile != null ? keyFile : certFile, password);
        List<X509Certificate> chain = new ArrayList<>(certificates(certFile));
        if (chainFile != null) {
            chain.addAll(certificates(chainFile));
        }
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        ks.setKeyEntry(alias, key, storePassword, chain.toArray(new Certificate[0]));
        return ks;
    }

    /** Trusted certificates from a PEM bundle (caCertificateFile). */
    static KeyStore trustStore(String caFile) throws IOException, GeneralSecurityException {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        int i = 0;
        for (X509Certificate c : certificates(caFile)) {
            ks.setCertificateEntry("ca-" + i++, c);
        }
        return ks;
    }

    static PrivateKey privateKey(String location, String password) throws IOException, GeneralSecurityException {
        byte[] pw = password == null ? null : password.getBytes(StandardCharsets.UTF_8);
        byte[] der;
        try (Local f = local(location)) {
            der = Native.pemKey(f.path.toString(), pw);
        } finally {
            if (pw != null) {
                Arrays.fill(pw, (byte) 0);
            }
        }
        try {
            PKCS8EncodedKeySpec spec = new PKCS8EncodedKeySpec(der);
            GeneralSecurityException last = null;
            for (String alg : KEY_ALGORITHMS) {
                try {
                    return KeyFactory.getInstance(alg).generatePrivate(spec);
                } catch (GeneralSecurityException e) {
                    last = e;
                }
            }
            throw new GeneralSecurityException("the key in " + location + " is of a type Java cannot hold", last);
        } finally {
            Arrays.fill(der, (byte) 0);
        }
    }

    static List<X509Certificate> certificates(String location) throws IOException, GeneralSecurityException {
        byte[][] der;
        try (Local f = local(location)) {
            der = Native.pemCertificates(f.path.toString());
        }
        CertificateFactory cf = CertificateFactory.getInstance("X.509");
        List<X509Certificate> out = new ArrayList<>(der.length);
        for (byte[] d : der) {
            out.add((X509Certificate) cf.generateCertificate(new ByteArrayInputStream(d)));
        }
        return out;
    }

    /**
     * A file OpenSSL can open for a Tomcat location (relative to
     * catalina.base, a file: URI, or a class-path/other resource, which is
     * copied to an owner-only temporary file for the moment it is read).
     */
    private static Local local(String location) throws IOException {
        NativeLibrary.ensureLoaded();
        ConfigurationSource.Resource r = ConfigFileLoader.getSource().getResource(location);
        URI uri = r.getURI();
        if (uri != null && "file".equals(uri.getScheme())) {
            r.close();
            return new Local(Paths.get(uri), false);
        }
        Path tmp = Files.createTempFile("tlsbridge-pem", ".pem",
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        try (InputStream in = r.getInputStream()) {
            Files.write(tmp, in.readAllBytes());
        } catch (IOException e) {
            Files.deleteIfExists(tmp);
            throw e;
        } finally {
            r.close();
        }
        return new Local(tmp, true);
    }

    private static final class Local implements AutoCloseable {
        final Path path;
        private final boolean temporary;

        Local(Path path, boolean temporary) {
            this.path = path;
            this.temporary = temporary;
        }

        @Override
        public void close() throws IOException {
            if (temporary) {
                Files.deleteIfExists(path);
            }
        }
    }
}
