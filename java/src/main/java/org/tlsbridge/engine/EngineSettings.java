package org.tlsbridge.engine;

import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiFunction;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;

/**
 * The settings half of the SSLEngine surface: suites, protocols, mode,
 * client authentication, parameters and the ALPN selector, all kept in an
 * {@link EngineConfig} that the engine applies to its native SSL when it
 * creates it. The mode and the SSL parameters cannot change once the
 * native SSL exists, as SunJSSE refuses them after the handshake starts.
 */
abstract class EngineSettings extends SSLEngine {
    final ReentrantLock lock = new ReentrantLock();
    final EngineConfig cfg;
    /** The native SSL exists and has been configured. Lock held. */
    boolean started;

    EngineSettings(EngineConfig cfg, String host, int port) {
        super(host, port);
        this.cfg = cfg;
    }

    private void beforeStart(String what) {
        if (started) {
            throw new IllegalArgumentException("cannot change " + what + " after the handshake has started");
        }
    }

    @Override
    public String[] getSupportedCipherSuites() {
        return cfg.context().suites().supported();
    }

    @Override
    public String[] getEnabledCipherSuites() {
        return cfg.suites();
    }

    @Override
    public void setEnabledCipherSuites(String[] suites) {
        lock.lock();
        try {
            cfg.setSuites(suites);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public String[] getSupportedProtocols() {
        return org.tlsbridge.context.Protocols.supported();
    }

    @Override
    public String[] getEnabledProtocols() {
        return cfg.protocols();
    }

    @Override
    public void setEnabledProtocols(String[] protocols) {
        lock.lock();
        try {
            cfg.setProtocols(protocols);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void setUseClientMode(boolean mode) {
        lock.lock();
        try {
            if (started && mode != cfg.clientMode()) {
                throw new IllegalArgumentException("Cannot change mode after SSL traffic has started");
            }
            cfg.setClientMode(mode);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public boolean getUseClientMode() {
        return cfg.clientMode();
    }

    @Override
    public void setNeedClientAuth(boolean need) {
        cfg.setClientAuth(need ? EngineConfig.AUTH_NEED : EngineConfig.AUTH_NONE);
    }

    @Override
    public boolean getNeedClientAuth() {
        return cfg.clientAuth() == EngineConfig.AUTH_NEED;
    }

    @Override
    public void setWantClientAuth(boolean want) {
        cfg.setClientAuth(want ? EngineConfig.AUTH_WANT : EngineConfig.AUTH_NONE);
    }

    @Override
    public boolean getWantClientAuth() {
        return cfg.clientAuth() == EngineConfig.AUTH_WANT;
    }

    @Override
    public void setEnableSessionCreation(boolean flag) {
        cfg.setSessionCreation(flag);
    }

    @Override
    public boolean getEnableSessionCreation() {
        return cfg.sessionCreation();
    }

    @Override
    public SSLParameters getSSLParameters() {
        lock.lock();
        try {
            return cfg.parameters();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void setSSLParameters(SSLParameters params) {
        lock.lock();
        try {
            beforeStart("SSL parameters");
            cfg.setParameters(params);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void setHandshakeApplicationProtocolSelector(BiFunction<SSLEngine, List<String>, String> selector) {
        cfg.alpnSelector = selector;
    }

    @Override
    public BiFunction<SSLEngine, List<String>, String> getHandshakeApplicationProtocolSelector() {
        return cfg.alpnSelector;
    }
}
