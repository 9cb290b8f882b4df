package org.tlsbridge.socket;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketOption;
import java.net.StandardSocketOptions;
import java.util.Set;

/** java.net's generic setOption/getOption mapped onto the classic setters. */
final class SocketOptionsSupport {
    static final Set<SocketOption<?>> SOCKET = Set.of(StandardSocketOptions.SO_RCVBUF,
            StandardSocketOptions.SO_SNDBUF, StandardSocketOptions.SO_KEEPALIVE, StandardSocketOptions.SO_REUSEADDR,
            StandardSocketOptions.SO_LINGER, StandardSocketOptions.TCP_NODELAY, StandardSocketOptions.IP_TOS);
    static final Set<SocketOption<?>> SERVER = Set.of(StandardSocketOptions.SO_RCVBUF,
            StandardSocketOptions.SO_REUSEADDR);

    private SocketOptionsSupport() {
    }

    private static UnsupportedOperationException unsupported(SocketOption<?> name) {
        return new UnsupportedOperationException("'" + name + "' not supported");
    }

    static <T> void set(Socket s, SocketOption<T> name, T value) throws IOException {
        if (name == null) {
            throw new NullPointerException("name");
        }
        if (name == StandardSocketOptions.SO_RCVBUF) {
            s.setReceiveBufferSize((Integer) value);
        } else if (name == StandardSocketOptions.SO_SNDBUF) {
            s.setSendBufferSize((Integer) value);
        } else if (name == StandardSocketOptions.SO_KEEPALIVE) {
            s.setKeepAlive((Boolean) value);
        } else if (name == StandardSocketOptions.SO_REUSEADDR) {
            s.setReuseAddress((Boolean) value);
        } else if (name == StandardSocketOptions.SO_LINGER) {
            int v = (Integer) value;
            s.setSoLinger(v >= 0, Math.max(v, 0));
        } else if (name == StandardSocketOptions.TCP_NODELAY) {
            s.setTcpNoDelay((Boolean) value);
        } else if (name == StandardSocketOptions.IP_TOS) {
            s.setTrafficClass((Integer) value);
        } else {
            throw unsupported(name);
        }
    }

    @SuppressWarnings("unchecked")
    static <T> T get(Socket s, SocketOption<T> name) throws IOException {
        Object v;
        if (name == StandardSocketOptions.SO_RCVBUF) {
            v = s.getReceiveBufferSize();
        } else if (name == StandardSocketOptions.SO_SNDBUF) {
            v = s.getSendBufferSize();
        } else if (name == StandardSocketOptions.SO_KEEPALIVE) {
            v = s.getKeepAlive();
        } else if (name == StandardSocketOptions.SO_REUSEADDR) {
            v = s.getReuseAddress();
        } else if (name == StandardSocketOptions.SO_LINGER) {
            v = s.getSoLinger();
        } else if (name == StandardSocketOptions.TCP_NODELAY) {
            v = s.getTcpNoDelay();
        } else if (name == StandardSocketOptions.IP_TOS) {
            v = s.getTrafficClass();
        } else {
            throw unsupported(name);
        }
        return (T) v;
    }

    static <T> void set(ServerSocket s, SocketOption<T> name, T value) throws IOException {
        if (name == StandardSocketOptions.SO_RCVBUF) {
            s.setReceiveBufferSize((Integer) value);
        } else if (name == StandardSocketOptions.SO_REUSEADDR) {
            s.setReuseAddress((Boolean) value);
        } else {
            throw unsupported(name);
        }
    }

    @SuppressWarnings("unchecked")
    static <T> T get(ServerSocket s, SocketOption<T> name) throws IOException {
        if (name == StandardSocketOptions.SO_RCVBUF) {
            return (T) Integer.valueOf(s.getReceiveBufferSize());
        } else if (name == StandardSocketOptions.SO_REUSEADDR) {
            return (T) Boolean.valueOf(s.getReuseAddress());
        }
        throw unsupported(name);
    }
}
