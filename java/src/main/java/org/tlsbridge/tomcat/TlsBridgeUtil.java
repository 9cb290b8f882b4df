package org.tlsbridge.tomcat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.CertificateEncodingException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import javax.net.ssl.CertPathTrustManagerParameters;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLException;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509KeyManager;
import org.apache.juli.logging.Log;
import org.apache.juli.logging.LogFactory;
import org.apache.tomcat.util.file.ConfigFileLoader;
import org.apache.tomcat.util.net.SSLContext;
import org.apache.tomcat.util.net.SSLHostConfig;
import org.apache.tomcat.util.net.SSLHostConfigCertificate;
import org.apache.tomcat.util.net.SSLUtilBase;
import org.apache.tomcat.util.net.openssl.OpenSSLConf;
import org.apache.tomcat.util.net.openssl.OpenSSLConfCmd;
import org.tlsbridge.TlsBridgeProvider;
import org.tlsbridge.context.CipherSuites;
import org.tlsbridge.internal.Native;
import org.tlsbridge.internal.NativeLibrary;

/**
 * One {@code <Certificate>} of an SSLHostConfig, turned into a tlsbridge
 * context. Tomcat's base class keeps its own rules for key stores, trust
 * stores, CRLs, protocols and session limits; what differs is done by
 * OpenSSL: PEM files are decoded by OpenSSL, the {@code ciphers} string is
 * expanded by OpenSSL, and the host's certificates of every type sit behind
 * one KeyManager so OpenSSL chooses per handshake.
 */
public class TlsBridgeUtil extends SSLUtilBase {
    private static final Log log = LogFactory.getLog(TlsBridgeUtil.class);
    private static final Set<String> PROTOCOLS = Set.of("TLSv1.2", "TLSv1.3");
    /**
     * Known and refused, as SunJSSE knows and disables them: Tomcat's default
     * protocols ("all") name them, and that must not be a warning.
     */
    private static final Set<String> RETIRED = Set.of("TLSv1", "TLSv1.1");

    static final String TICKET_KEYS_CMD = "tlsbridge.ticketKeys";

    /** Key algorithms a server certificate can have, as Java names them. */
    private static final String[] KEY_TYPES = {"RSA", "EC", "EdDSA", "RSASSA-PSS", "DSA"};

    private volatile String[] ciphers;

    public TlsBridgeUtil(SSLHostConfigCertificate certificate) {
        super(certificate);
    }

    @Override
    protected Log getLog() {
        return log;
    }

    @Override
    protected Set<String> getImplementedProtocols() {
        Set<String> all = new java.util.HashSet<>(PROTOCOLS);
        all.addAll(RETIRED);
        return all;
    }

    /** TLS 1.2 and 1.3 of what Tomcat enabled; a configuration left with neither fails the connector. */
    @Override
    public String[] getEnabledProtocols() {
        String[] configured = super.getEnabledProtocols();
        List<String> out = new ArrayList<>();
        List<String> dropped = new ArrayList<>();
        for (String p : configured) {
            (PROTOCOLS.contains(p) ? out : dropped).add(p);
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException("protocols " + List.of(configured)
                    + " include neither TLSv1.2 nor TLSv1.3, the only versions tlsbridge serves");
        }
        if (!dropped.isEmpty() && !sslHostConfig.getProtocols().containsAll(Set.of("TLSv1", "TLSv1.1", "TLSv1.2",
                "TLSv1.3"))) {
            // named on purpose (not Tomcat's "all"): say they stay off
            log.warn("protocols " + dropped + " are not served by tlsbridge (TLS 1.2 and 1.3 only)");
        }
        return out.toArray(new String[0]);
    }

    /**
     * Empty on purpose: it makes the base class keep Tomcat's own reading of
     * the cipher string without filtering or failing on it; the list that
     * is used comes from {@link #getEnabledCiphers()}, resolved by OpenSSL.
     */
    @Override
    protected Set<String> getImplementedCiphers() {
        return Set.of();
    }

    @Override
    protected boolean isTls13RenegAuthAvailable() {
        // Tomcat would ask for a client certificate after the handshake through
        // its own OpenSSL API only; through SSLEngine there is no standard call.
        return false;
    }

    /**
     * The host's suites. When {@code ciphers} is not set, Tomcat's own
     * default string ("HIGH:!aNULL:...:!kRSA") would select CBC and DHE
     * suites; tlsbridge's secure defaults are used instead (with
     * jdk.tls.server.cipherSuites honoured, as for any tlsbridge server).
     */
    @Override
    public String[] getEnabledCiphers() {
        String[] c = ciphers;
        if (c == null) {
            c = TomcatVersions.isDefaultCiphers(sslHostConfig.getCiphers()) ? defaultCiphers() : configuredCiphers();
            if (log.isDebugEnabled()) {
                log.debug("TLS virtual host [" + sslHostConfig.getHostName() + "] enables " + String.join(",", c));
            }
            ciphers = c;
        }
        return c.clone();
    }

    /** tlsbridge's defaults; on Tomcat 11 a {@code cipherSuites} set alone replaces their TLS 1.3 part. */
    private String[] defaultCiphers() {
        CipherSuites suites;
        String[] d;
        NativeLibrary.ensureLoaded();
        try {
            suites = CipherSuites.get();
            d = suites.sideDefaults(false);
        } catch (SSLException e) {
            throw new IllegalStateException("tlsbridge cannot list its default cipher suites: " + e.getMessage(), e);
        }
        String tls13 = TomcatVersions.tls13CipherSuites(sslHostConfig);
        if (TomcatVersions.isDefaultCipherSuites(tls13)) {
            return d;
        }
        List<String> out = new ArrayList<>(Arrays.asList(resolve(tls13).enabled));
        for (String s : d) {
            if (!suites.isTls13(s)) {
                out.add(s);
            }
        }
        return out.toArray(new String[0]);
    }

    private String[] configuredCiphers() {
        String spec = sslHostConfig.getCiphers();
        String tls13 = TomcatVersions.tls13CipherSuites(sslHostConfig);
        if (tls13 != null && !tls13.isBlank()) {
            // Tomcat 11: TLS 1.3 suites in their own attribute; OpenSSL takes them in this order
            spec = tls13 + ":" + spec;
        }
        CipherConfig.Result r = resolve(spec);
        if (!r.skipped.isEmpty()) {
            log.warn("ciphers=\"" + spec + "\": suites OpenSSL selected that tlsbridge does not enable: " + r.skipped);
        }
        return r.enabled;
    }

    private static CipherConfig.Result resolve(String spec) {
        CipherConfig.Result r;
        try {
            r = CipherConfig.resolve(spec);
        } catch (IOException e) {
            throw new IllegalArgumentException("ciphers=\"" + spec + "\" rejected by OpenSSL: " + e.getMessage(), e);
        }
        if (r.enabled.length == 0) {
            throw new IllegalArgumentException("ciphers=\"" + spec + "\" selects no cipher suite tlsbridge supports"
                    + (r.skipped.isEmpty() ? "" : " (unsupported: " + r.skipped + ")"));
        }
        return r;
    }

    @Override
    protected SSLContext createSSLContextInternal(List<String> negotiableProtocols) {
        long options = sslHostConfig.getDisableSessionTickets() ? TlsBridgeSSLContext.OP_NO_TICKET : 0;
        log.info("TLS virtual host [" + sslHostConfig.getHostName() + "], certificate type ["
                + certificate.getType() + "]: tlsbridge " + TlsBridgeProvider.tlsbridgeVersion() + " on "
                + TlsBridgeProvider.openSslVersion() + (negotiableProtocols.isEmpty() ? ""
                        : "; ALPN offers " + negotiableProtocols));
        return new TlsBridgeSSLContext(sslHostConfig.getSslProtocol(), options, ticketKeyFile(sslHostConfig),
                namedGroups(), getEnabledCiphers());
    }

    /**
     * The host's session-ticket key file (docs/fleet.md): an
     * {@code <OpenSSLConfCmd name="tlsbridge.ticketKeys" value="PATH"/>} in the
     * host's {@code <OpenSSLConf>}, which stock server.xml accepts and
     * Tomcat's JSSE code leaves alone; null when absent.
     */
    static String ticketKeyFile(SSLHostConfig host) {
        OpenSSLConf conf = host.getOpenSslConf();
        if (conf == null) {
            return null;
        }
        for (OpenSSLConfCmd cmd : conf.getCommands()) {
            if (TICKET_KEYS_CMD.equals(cmd.getName())) {
                return cmd.getValue();
            }
        }
        return null;
    }

    /**
     * The host's {@code groups} for every engine of its context. Tomcat on
     * JDK 20+ also sets them per engine (SSLParameters.setNamedGroups, kept to
     * those the client offered); on JDK 17 this is the only way they apply.
     * Names Tomcat does not know it warns about itself; known ones this
     * OpenSSL lacks (ML-KEM before 3.5) are left out with a warning, and a
     * list left with nothing fails the connector, as protocols do.
     */
    private String[] namedGroups() {
        String g = TomcatVersions.groups(sslHostConfig);
        if (g == null || g.isBlank()) {
            return null;
        }
        String[] names = g.trim().split("\\s*,\\s*");
        List<String> unusable = org.tlsbridge.engine.NamedGroups.unusable(names);
        if (unusable.size() == names.length) {
            throw new IllegalArgumentException("groups " + List.of(names) + ": none is a group "
                    + TlsBridgeProvider.openSslVersion() + " implements (it has "
                    + String.join(", ", org.tlsbridge.engine.NamedGroups.supported()) + ")");
        }
        if (!unusable.isEmpty()) {
            log.warn("TLS virtual host [" + sslHostConfig.getHostName() + "]: groups " + unusable
                    + " are not available in " + TlsBridgeProvider.openSslVersion() + " and are left out");
        }
        return names;
    }

    /** The host's certificates of every type, this one first (see {@link HostKeyManager}). */
    @Override
    public KeyManager[] getKeyManagers() throws Exception {
        List<X509KeyManager> all = new ArrayList<>();
        all.add(ownKeyManager());
        for (SSLHostConfigCertificate other : sslHostConfig.getCertificates(true)) {
            if (other != certificate) {
                all.add(new TlsBridgeUtil(other).ownKeyManager());
            }
        }
        return new KeyManager[] {new HostKeyManager(all)};
    }

    /** This certificate alone: PEM through OpenSSL, key stores as Tomcat loads them. */
    X509KeyManager ownKeyManager() throws Exception {
        KeyManager[] kms;
        boolean pem = certificate.getCertificateKeystore() == null && certificate.getCertificateFile() != null;
        if (pem) {
            kms = pemKeyManagers();
        } else {
            kms = super.getKeyManagers();
        }
        for (KeyManager km : kms) {
            if (km instanceof X509KeyManager) {
                checkKeyPairs((X509KeyManager) km, pem);
                return (X509KeyManager) km;
            }
        }
        throw new IOException("no X509 key manager for certificate type " + certificate.getType());
    }

    /**
     * Each key this certificate serves goes through OpenSSL now, as a handshake would: a key
     * that does not match its certificate (a renewal caught half-way) fails the configuration,
     * so a reload keeps the context that works instead of one whose every handshake fails.
     */
    private void checkKeyPairs(X509KeyManager km, boolean pem) throws SSLException {
        NativeLibrary.ensureLoaded();
        Set<String> seen = new HashSet<>();
        for (String type : KEY_TYPES) {
            String alias = km.chooseServerAlias(type, null, null);
            X509Certificate[] chain = alias == null ? null : km.getCertificateChain(alias);
            if (chain == null || chain.length == 0 || !type.equals(chain[0].getPublicKey().getAlgorithm())
                    || !seen.add(alias)) {
                continue;
            }
            PrivateKey key = km.getPrivateKey(alias);
            byte[] pkcs8 = key == null ? null : key.getEncoded();
            if (pkcs8 == null) {
                continue; // reported at the handshake, with the reason, as for any KeyManager
            }
            try {
                byte[][] der = new byte[chain.length][];
                for (int i = 0; i < chain.length; i++) {
                    der[i] = chain[i].getEncoded();
                }
                Native.keyFree(Native.keyNew(pkcs8, der));
            } catch (IllegalArgumentException | CertificateEncodingException e) {
                throw new SSLException("TLS virtual host [" + sslHostConfig.getHostName() + "]: the private key of "
                        + describe(pem) + " cannot serve its certificate: " + e.getMessage(), e);
            } finally {
                Arrays.fill(pkcs8, (byte) 0);
            }
        }
    }

    private String describe(boolean pem) {
        if (pem) {
            return "[" + (certificate.getCertificateKeyFile() != null ? certificate.getCertificateKeyFile()
                    : certificate.getCertificateFile()) + "] for [" + certificate.getCertificateFile() + "]";
        }
        return "key store [" + certificate.getCertificateKeystoreFile() + "]";
    }

    private KeyManager[] pemKeyManagers() throws Exception {
        String alias = certificate.getCertificateKeyAlias();
        if (alias == null) {
            alias = DEFAULT_KEY_ALIAS;
        }
        char[] storePass = new char[0];
        String passwordFile = certificate.getCertificateKeyPasswordFile();
        KeyStore ks = PemFiles.keyStore(alias, certificate.getCertificateKeyFile(), certificate.getCertificateFile(),
                certificate.getCertificateChainFile(), keyPassword(), passwordFile == null ? "certificateKeyPassword"
                        : "certificateKeyPasswordFile [" + passwordFile + "]", storePass);
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(sslHostConfig.getKeyManagerAlgorithm());
        kmf.init(ks, storePass);
        return kmf.getKeyManagers();
    }

    /** certificateKeyPassword, else the first line of certificateKeyPasswordFile (Tomcat's rule). */
    private String keyPassword() throws IOException {
        String file = certificate.getCertificateKeyPasswordFile();
        if (file == null) {
            return certificate.getCertificateKeyPassword();
        }
        try (BufferedReader r = new BufferedReader(new InputStreamReader(
                ConfigFileLoader.getSource().getResource(file).getInputStream(), StandardCharsets.UTF_8))) {
            return r.readLine();
        } catch (IOException e) {
            throw new IOException("certificateKeyPasswordFile [" + file + "]: " + e.getMessage(), e);
        }
    }

    /** Tomcat's trust store rules, plus a PEM caCertificateFile read by OpenSSL when no trust store is set. */
    @Override
    public TrustManager[] getTrustManagers() throws Exception {
        TrustManager[] tms = super.getTrustManagers();
        String caFile = sslHostConfig.getCaCertificateFile();
        if (tms != null || caFile == null) {
            return tms;
        }
        KeyStore ts = PemFiles.trustStore(caFile);
        TrustManagerFactory tmf = TrustManagerFactory.getInstance("PKIX");
        tmf.init(new CertPathTrustManagerParameters(getParameters(sslHostConfig.getCertificateRevocationListFile(),
                ts, sslHostConfig.getRevocationEnabled())));
        return tmf.getTrustManagers();
    }
}
