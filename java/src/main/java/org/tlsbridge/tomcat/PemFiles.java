package org.tlsbridge.tomcat;

import java.io.ByteArrayInputStream;
import java.io.FileNotFoundException;
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
import javax.net.ssl.SSLException;
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

    /**
     * A one-entry in-memory key store: the key, then certificateFile's and certificateChainFile's certificates.
     * passwordSetting names where the key's password came from, for the error a wrong one gives.
     */
    static KeyStore keyStore(String alias, String keyFile, String certFile, String chainFile, String password,
            String passwordSetting, char[] storePassword) throws IOException, GeneralSecurityException {
        PrivateKey key = keyFile != null ? privateKey("certificateKeyFile", keyFile, password, passwordSetting)
                : privateKey("certificateFile", certFile, password, passwordSetting);
        List<X509Certificate> chain = new ArrayList<>(certificates("certificateFile", certFile));
        if (chainFile != null) {
            chain.addAll(certificates("certificateChainFile", chainFile));
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
        for (X509Certificate c : certificates("caCertificateFile", caFile)) {
            ks.setCertificateEntry("ca-" + i++, c);
        }
        return ks;
    }

    /**
     * The private key of the file that setting names (location as the user wrote it); a failure names
     * both, and passwordSetting when the password is the likely cause.
     */
    static PrivateKey privateKey(String setting, String location, String password, String passwordSetting)
            throws IOException, GeneralSecurityException {
        byte[] pw = password == null ? null : password.getBytes(StandardCharsets.UTF_8);
        byte[] der;
        try (Local f = local(location)) {
            der = Native.pemKey(f.path.toString(), pw, passwordSetting);
        } catch (IOException e) {
            throw named(setting, location, e);
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
            throw new GeneralSecurityException(setting + " [" + location + "]: the key is of a type Java cannot hold",
                    last);
        } finally {
            Arrays.fill(der, (byte) 0);
        }
    }

    static List<X509Certificate> certificates(String setting, String location)
            throws IOException, GeneralSecurityException {
        byte[][] der;
        try (Local f = local(location)) {
            der = Native.pemCertificates(f.path.toString());
        } catch (IOException e) {
            throw named(setting, location, e);
        }
        CertificateFactory cf = CertificateFactory.getInstance("X.509");
        List<X509Certificate> out = new ArrayList<>(der.length);
        for (byte[] d : der) {
            out.add((X509Certificate) cf.generateCertificate(new ByteArrayInputStream(d)));
        }
        return out;
    }

    /**
     * The same failure, led by the setting and the file as the user wrote them (OpenSSL saw an absolute
     * path, or a temporary copy of a class-path resource). Its class is kept, and it has no cause: the
     * cause would only say OpenSSL's reasons a second time in every logged stack trace.
     */
    private static IOException named(String setting, String location, IOException e) {
        String msg = setting + " [" + location + "]: " + e.getMessage();
        IOException out;
        if (e instanceof SSLException) {
            out = new SSLException(msg);
        } else if (e instanceof FileNotFoundException) {
            out = new FileNotFoundException(msg);
        } else {
            out = new IOException(msg);
        }
        out.setStackTrace(e.getStackTrace());
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
