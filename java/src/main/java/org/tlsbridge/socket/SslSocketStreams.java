package org.tlsbridge.socket;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Objects;

/**
 * The InputStream and OutputStream both tlsbridge SSLSockets hand out. They
 * hold what java.io and SunJSSE fix for every socket kind (argument checks,
 * a zero-length call returns before the handshake or any failure is looked
 * at, one-byte calls, close closes the socket); the TLS is the socket's.
 */
final class SslSocketStreams {
    private SslSocketStreams() {
    }

    static final class In extends InputStream {
        private final BaseSslSocket s;

        In(BaseSslSocket s) {
            this.s = s;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) <= 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            Objects.checkFromIndexSize(off, len, b.length);
            if (len == 0) {
                return 0;
            }
            s.checkReadable();
            return s.readPlain(b, off, len);
        }

        @Override
        public int available() throws IOException {
            return s.availablePlain();
        }

        @Override
        public void close() throws IOException {
            s.close();
        }
    }

    static final class Out extends OutputStream {
        private final BaseSslSocket s;

        Out(BaseSslSocket s) {
            this.s = s;
        }

        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            Objects.checkFromIndexSize(off, len, b.length);
            if (len == 0) {
                return;
            }
            s.checkWritable();
            s.writePlain(b, off, len);
        }

        @Override
        public void close() throws IOException {
            s.close();
        }
    }
}
