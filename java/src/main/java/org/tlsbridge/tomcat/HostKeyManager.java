package org.tlsbridge.tomcat;

import java.net.Socket;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509KeyManager;

/**
 * Every {@code <Certificate>} of one SSLHostConfig behind one KeyManager, so
 * that OpenSSL, which asks once per key type on every handshake, can pick
 * RSA or EC itself from what the client offers, whichever of Tomcat's
 * per-certificate contexts the connection landed on.
 *
 * <p>Aliases are {@code "<index>:<alias>"} so identical alias names in
 * different stores ("tomcat" for every PEM certificate) never mix; a bare
 * alias refers to the first (the context's own) certificate, as Tomcat's
 * logging expects. A delegate's alias is only used for the key type it is:
 * Tomcat's alias-pinning key manager names its alias for every type.
 */
final class HostKeyManager extends X509ExtendedKeyManager {
    private final List<X509KeyManager> delegates;

    HostKeyManager(List<X509KeyManager> delegates) {
        this.delegates = new ArrayList<>(delegates);
    }

    private String choose(String keyType, Principal[] issuers, Socket socket, SSLEngine engine) {
        for (int i = 0; i < delegates.size(); i++) {
            X509KeyManager d = delegates.get(i);
            String alias;
            if (engine != null && d instanceof X509ExtendedKeyManager) {
                alias = ((X509ExtendedKeyManager) d).chooseEngineServerAlias(keyType, issuers, engine);
            } else {
                alias = d.chooseServerAlias(keyType, issuers, socket);
            }
            if (alias != null && matches(d.getCertificateChain(alias), keyType)) {
                return i + ":" + alias;
            }
        }
        return null;
    }

    private static boolean matches(X509Certificate[] chain, String keyType) {
        return chain != null && chain.length > 0 && keyType.equals(chain[0].getPublicKey().getAlgorithm());
    }

    @Override
    public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
        return choose(keyType, issuers, socket, null);
    }

    @Override
    public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
        return choose(keyType, issuers, null, engine);
    }

    @Override
    public String[] getServerAliases(String keyType, Principal[] issuers) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < delegates.size(); i++) {
            String[] a = delegates.get(i).getServerAliases(keyType, issuers);
            if (a != null) {
                for (String s : a) {
                    out.add(i + ":" + s);
                }
            }
        }
        return out.isEmpty() ? null : out.toArray(new String[0]);
    }

    private record Target(X509KeyManager km, String alias) {
    }

    /** The delegate and its own alias; a bare alias belongs to the first delegate. */
    private Target split(String alias) {
        if (alias == null) {
            return null;
        }
        int c = alias.indexOf(':');
        if (c > 0) {
            try {
                int i = Integer.parseInt(alias.substring(0, c));
                if (i >= 0 && i < delegates.size()) {
                    return new Target(delegates.get(i), alias.substring(c + 1));
                }
            } catch (NumberFormatException e) {
                // a bare alias that contains ':'
            }
        }
        return delegates.isEmpty() ? null : new Target(delegates.get(0), alias);
    }

    @Override
    public X509Certificate[] getCertificateChain(String alias) {
        Target t = split(alias);
        return t == null ? null : t.km().getCertificateChain(t.alias());
    }

    @Override
    public PrivateKey getPrivateKey(String alias) {
        Target t = split(alias);
        return t == null ? null : t.km().getPrivateKey(t.alias());
    }

    // A server never presents a client certificate.

    @Override
    public String[] getClientAliases(String keyType, Principal[] issuers) {
        return null;
    }

    @Override
    public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
        return null;
    }

    @Override
    public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine engine) {
        return null;
    }
}
