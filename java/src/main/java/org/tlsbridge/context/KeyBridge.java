package org.tlsbridge.context;

import java.lang.ref.Reference;
import java.security.PrivateKey;
import java.security.cert.CertificateEncodingException;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.X509ExtendedKeyManager;
import org.tlsbridge.internal.Cleaners;
import org.tlsbridge.internal.Native;

/**
 * Key material from the KeyManager, parsed into OpenSSL once per
 * certificate and reused by every handshake that picks it. The KeyManager
 * is asked on every handshake, so per-SNI choices and replaced certificates
 * work.
 *
 * <p>The cache is keyed by the leaf certificate, not the alias: NewSunX509
 * (and KeyManagers built on it) returns a fresh alias on every choice
 * ("&lt;counter&gt;.&lt;builder&gt;.&lt;alias&gt;"), so an alias key missed on
 * every handshake, re-parsed the private key each time and kept one entry
 * per handshake. A certificate fixes its public key and so its private
 * key: the same chain is the same material.
 */
public final class KeyBridge {
    /** Distinct certificates kept; past this (a KeyManager minting certificates) the cache starts over. */
    private static final int MAX_CACHED = 256;
    private final X509ExtendedKeyManager km;
    private final ConcurrentHashMap<X509Certificate, KeyMaterial> cache = new ConcurrentHashMap<>();

    KeyBridge(X509ExtendedKeyManager km) {
        this.km = km;
    }

    public X509ExtendedKeyManager keyManager() {
        return km;
    }

    /** The parsed key for an alias, or null when the alias has no chain. */
    public KeyMaterial material(String alias) throws SSLException {
        if (km == null || alias == null) {
            return null;
        }
        X509Certificate[] chain = km.getCertificateChain(alias);
        if (chain == null || chain.length == 0) {
            return null;
        }
        byte[] staple = staple(alias);
        KeyMaterial m = cache.get(chain[0]);
        if (m != null && Arrays.equals(m.chain, chain) && Arrays.equals(m.staple, staple)) {
            return m;
        }
        PrivateKey pk = km.getPrivateKey(alias);
        byte[] pkcs8 = pk == null ? null : pk.getEncoded();
        if (pkcs8 == null) {
            throw new SSLHandshakeException("private key of alias '" + alias
                    + "' cannot be exported (PKCS#8); tlsbridge needs the key bytes for OpenSSL");
        }
        byte[][] der = new byte[chain.length][];
        try {
            for (int i = 0; i < chain.length; i++) {
                der[i] = chain[i].getEncoded();
            }
            long h = Native.keyNew(pkcs8, der);
            if (staple != null) {
                Native.keySetOcsp(h, staple);
            }
            m = new KeyMaterial(chain.clone(), h, staple);
        } catch (CertificateEncodingException e) {
            throw new SSLHandshakeException("cannot encode certificate of alias '" + alias + "': " + e);
        } finally {
            Arrays.fill(pkcs8, (byte) 0);
        }
        if (cache.size() >= MAX_CACHED) {
            cache.clear();
        }
        cache.put(chain[0], m);
        return m;
    }

    /** The OCSP response to staple for an alias, if any is configured. */
    private byte[] staple(String alias) {
        if (km instanceof org.tlsbridge.OcspResponseSource) {
            return ((org.tlsbridge.OcspResponseSource) km).ocspResponse(alias);
        }
        String dir = System.getProperty("tlsbridge.ocsp.dir");
        if (dir == null || dir.isEmpty()) {
            return null;
        }
        // NewSunX509 hands out aliases as "<uid>.<builder>.<keystore alias>": the file is
        // named for the key store alias.
        String name = alias.matches("\\d+\\.\\d+\\..+") ? alias.replaceFirst("^\\d+\\.\\d+\\.", "") : alias;
        java.nio.file.Path f = java.nio.file.Paths.get(dir, name + ".der");
        try {
            long stamp = java.nio.file.Files.getLastModifiedTime(f).toMillis();
            Staple s = staples.get(name);
            if (s == null || s.stamp != stamp) {
                s = new Staple(stamp, java.nio.file.Files.readAllBytes(f));
                staples.put(name, s);
            }
            return s.der;
        } catch (java.io.IOException e) {
            return null;
        }
    }

    private final ConcurrentHashMap<String, Staple> staples = new ConcurrentHashMap<>();

    private static final class Staple {
        final long stamp;
        final byte[] der;

        Staple(long stamp, byte[] der) {
            this.stamp = stamp;
            this.der = der;
        }
    }

    /** An OpenSSL key + chain (+ staple); freed when no handshake can use it any more. */
    public static final class KeyMaterial {
        final X509Certificate[] chain;
        final byte[] staple;
        private final long handle;

        KeyMaterial(X509Certificate[] chain, long handle, byte[] staple) {
            this.chain = chain;
            this.staple = staple;
            this.handle = handle;
            Cleaners.CLEANER.register(this, () -> Native.keyFree(handle));
        }

        public X509Certificate[] chain() {
            return chain.clone();
        }

        /** Whether this is the key behind a native handle (Native.localKey). */
        public boolean is(long nativeHandle) {
            return nativeHandle != 0 && nativeHandle == handle;
        }

        /** Installs this key on an engine's SSL (which takes its own references). */
        public void useOn(long engine) throws SSLException {
            try {
                Native.useKey(engine, handle);
            } finally {
                Reference.reachabilityFence(this);
            }
        }
    }
}
