package org.tlsbridge.socket;

import java.io.IOException;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketOption;
import java.util.Set;
import org.tlsbridge.engine.EngineConfig;

/**
 * java.net.Socket's options on a descriptor libtlsbridge owns: each one a
 * setsockopt/getsockopt on the {@link NativeSocket} the subclass provides
 * (made on first need, as java.net makes its socket).
 */
abstract class DescriptorOptionsSocket extends BaseSslSocket {
    DescriptorOptionsSocket(EngineConfig cfg) {
        super(cfg);
    }

    /** The descriptor to set or read an option on. */
    abstract NativeSocket forOption() throws SocketException;

    private void set(int opt, int value) throws SocketException {
        forOption().setOption(opt, value);
    }

    private int get(int opt) throws SocketException {
        return forOption().option(opt);
    }

    @Override
    public void setTcpNoDelay(boolean on) throws SocketException {
        set(NativeSocket.TCP_NODELAY, on ? 1 : 0);
    }

    @Override
    public boolean getTcpNoDelay() throws SocketException {
        return get(NativeSocket.TCP_NODELAY) != 0;
    }

    @Override
    public void setKeepAlive(boolean on) throws SocketException {
        set(NativeSocket.SO_KEEPALIVE, on ? 1 : 0);
    }

    @Override
    public boolean getKeepAlive() throws SocketException {
        return get(NativeSocket.SO_KEEPALIVE) != 0;
    }

    @Override
    public void setReuseAddress(boolean on) throws SocketException {
        set(NativeSocket.SO_REUSEADDR, on ? 1 : 0);
    }

    @Override
    public boolean getReuseAddress() throws SocketException {
        return get(NativeSocket.SO_REUSEADDR) != 0;
    }

    @Override
    public void setReceiveBufferSize(int size) throws SocketException {
        if (size <= 0) {
            throw new IllegalArgumentException("invalid receive size");
        }
        set(NativeSocket.SO_RCVBUF, size);
    }

    @Override
    public int getReceiveBufferSize() throws SocketException {
        return get(NativeSocket.SO_RCVBUF);
    }

    @Override
    public void setSendBufferSize(int size) throws SocketException {
        if (size <= 0) {
            throw new IllegalArgumentException("negative send size");
        }
        set(NativeSocket.SO_SNDBUF, size);
    }

    @Override
    public int getSendBufferSize() throws SocketException {
        return get(NativeSocket.SO_SNDBUF);
    }

    @Override
    public void setSoLinger(boolean on, int linger) throws SocketException {
        if (on && linger < 0) {
            throw new IllegalArgumentException("invalid value for SO_LINGER");
        }
        set(NativeSocket.SO_LINGER, on ? Math.min(linger, 65535) : -1);
    }

    @Override
    public int getSoLinger() throws SocketException {
        return get(NativeSocket.SO_LINGER);
    }

    @Override
    public void setTrafficClass(int tc) throws SocketException {
        if (tc < 0 || tc > 255) {
            throw new IllegalArgumentException("tc is not in range 0 -- 255");
        }
        set(NativeSocket.IP_TOS, tc);
    }

    @Override
    public int getTrafficClass() throws SocketException {
        return get(NativeSocket.IP_TOS);
    }

    @Override
    public <T> Socket setOption(SocketOption<T> name, T value) throws IOException {
        SocketOptionsSupport.set(this, name, value);
        return this;
    }

    @Override
    public <T> T getOption(SocketOption<T> name) throws IOException {
        return SocketOptionsSupport.get(this, name);
    }

    @Override
    public Set<SocketOption<?>> supportedOptions() {
        return SocketOptionsSupport.SOCKET;
    }
}
