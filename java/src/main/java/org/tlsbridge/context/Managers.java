package org.tlsbridge.context;

import java.io.InputStream;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.security.KeyManagementException;
import java.security.KeyStore;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509KeyManager;
import javax.net.ssl.X509TrustManager;

/** Picking and adapting the managers SSLContext.init is given, as SunJSSE does. */
final class Managers {
    private Managers() {
    }

    /** The first X509KeyManager, made extended if it is not; null when there is none. */
    static X509ExtendedKeyManager keyManager(KeyManager[] kms) {
        if (kms == null) {
            return null;
        }
        for (KeyManager km : kms) {
            if (km instanceof X509KeyManager) {
                return extended((X509KeyManager) km);
            }
        }
        return null;
    }

    static X509ExtendedKeyManager extended(X509KeyManager km) {
        if (km instanceof X509ExtendedKeyManager) {
            return (X509ExtendedKeyManager) km;
        }
        return new X509ExtendedKeyManager() {
            @Override
            public String[] getClientAliases(String keyType, Principal[] issuers) {
                return km.getClientAliases(keyType, issuers);
            }

            @Override
            public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
                return km.chooseClientAlias(keyType, issuers, socket);
            }

            @Override
            public String[] getServerAliases(String keyType, Principal[] issuers) {
                return km.getServerAliases(keyType, issuers);
            }

            @Override
            public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
                return km.chooseServerAlias(keyType, issuers, socket);
            }

            @Override
            public X509Certificate[] getCertificateChain(String alias) {
                return km.getCertificateChain(alias);
            }

            @Override
            public PrivateKey getPrivateKey(String alias) {
                return km.getPrivateKey(alias);
            }

            @Override
            public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine engine) {
                return km.chooseClientAlias(keyType, issuers, null);
            }

            @Override
            public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
                return km.chooseServerAlias(keyType, issuers, null);
            }
        };
    }

    /** The first X509TrustManager, or the JDK's default one when none is given. */
    static X509TrustManager trustManager(TrustManager[] tms) throws KeyManagementException {
        if (tms != null) {
            for (TrustManager tm : tms) {
                if (tm instanceof X509TrustManager) {
                    return (X509TrustManager) tm;
                }
            }
        }
        try {
            TrustManagerFactory f = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            f.init((KeyStore) null);
            for (TrustManager tm : f.getTrustManagers()) {
                if (tm instanceof X509TrustManager) {
                    return (X509TrustManager) tm;
                }
            }
        } catch (Exception e) {
            throw new KeyManagementException("cannot build the default TrustManager: " + e, e);
        }
        throw new KeyManagementException("no X509TrustManager available");
    }

    /** Key managers from the javax.net.ssl.keyStore* properties, as the JDK's Default context. */
    static KeyManager[] defaultKeyManagers() throws KeyManagementException {
        String path = System.getProperty("javax.net.ssl.keyStore", "");
        String type = System.getProperty("javax.net.ssl.keyStoreType", KeyStore.getDefaultType());
        String pass = System.getProperty("javax.net.ssl.keyStorePassword", "");
        String provider = System.getProperty("javax.net.ssl.keyStoreProvider", "");
        try {
            KeyStore ks = null;
            if (!path.isEmpty() && !"NONE".equals(path)) {
                ks = provider.isEmpty() ? KeyStore.getInstance(type) : KeyStore.getInstance(type, provider);
                try (InputStream in = Files.newInputStream(Paths.get(path))) {
                    ks.load(in, pass.toCharArray());
                }
            }
            KeyManagerFactory f = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            f.init(ks, pass.toCharArray());
            return f.getKeyManagers();
        } catch (Exception e) {
            // the settings as the user wrote them, and the JDK's reason (its class says nothing more)
            throw new KeyManagementException("cannot load the default key store -Djavax.net.ssl.keyStore=" + path
                    + " (type " + type + (pass.isEmpty() ? ", no -Djavax.net.ssl.keyStorePassword"
                            : ", with -Djavax.net.ssl.keyStorePassword") + "): " + e.getMessage(), e);
        }
    }
}
