package org.tlsbridge;

import java.security.Provider;
import java.nio.file.Path;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSessionContext;
import org.tlsbridge.engine.SessionContextImpl;
import org.tlsbridge.internal.Native;
import org.tlsbridge.internal.NativeLibrary;

/**
 * The TLSBridge JSSE provider: SSLContext "TLS", "TLSv1.2", "TLSv1.3" and
 * "Default", with TLS done by OpenSSL 3.
 *
 * <p>Constructing the provider does not load native code; the first
 * SSLContext does. If the library cannot load, SSLContext.getInstance moves
 * on to the next provider, so installing TLSBridge first is safe.
 */
public final class TlsBridgeProvider extends Provider {
    private static final long serialVersionUID = 1L;
    public static final String NAME = "TLSBridge";

    public TlsBridgeProvider() {
        super(NAME, versionNumber(), "TLS through OpenSSL 3 (tlsbridge " + NativeLibrary.version() + ")");
        String base = "org.tlsbridge.context.TlsBridgeContextSpi$";
        putService(new Service(this, "SSLContext", "TLS", base + "Tls", List.of("SSL"), null));
        putService(new Service(this, "SSLContext", "TLSv1.2", base + "Tls12", null, null));
        putService(new Service(this, "SSLContext", "TLSv1.3", base + "Tls13", null, null));
        putService(new Service(this, "SSLContext", "Default", base + "Default", null, null));
    }

    private static String versionNumber() {
        String v = NativeLibrary.version();
        int dash = v.indexOf('-');
        return dash > 0 ? v.substring(0, dash) : v;
    }

    /** OpenSSL's version string, e.g. "OpenSSL 3.0.19 27 Jan 2026"; loads the library. */
    public static String openSslVersion() {
        NativeLibrary.ensureLoaded();
        return Native.openSslVersion();
    }

    /** tlsbridge's own version and build id. */
    public static String tlsbridgeVersion() {
        return NativeLibrary.version() + " (build " + NativeLibrary.javaBuildId() + ")";
    }

    /** Whether the native library loads on this machine; never throws. */
    public static boolean isAvailable() {
        try {
            NativeLibrary.ensureLoaded();
            return true;
        } catch (Throwable t) {
            return false;
        }
    }

    /**
     * Whether a tlsbridge session was resumed (abbreviated handshake) rather
     * than negotiated in full; false for sessions of other providers.
     */
    public static boolean isResumed(javax.net.ssl.SSLSession session) {
        return session instanceof org.tlsbridge.engine.TlsBridgeSession
                && ((org.tlsbridge.engine.TlsBridgeSession) session).isResumed();
    }

    /**
     * Shares session-ticket keys across servers (docs/fleet.md): the keys in
     * {@code keyFile} (nginx's format: one 48-byte key, or 80-byte keys back
     * to back) seal and open the tickets of {@code context}, an initialised
     * tlsbridge SSLContext, from the next handshake on. The first key seals
     * new tickets, every key opens them; the file is read again when it
     * changes (checked every {@code tlsbridge.ticketKeys.checkMillis}, 5 s by
     * default). A later init of the same context keeps the file.
     *
     * @throws SSLException if the file is missing, not a multiple of a key's
     *     size, malformed or readable by every user (the keys in use stay), or
     *     the context is not a tlsbridge one
     * @throws IllegalStateException if the context is not initialised
     */
    public static void setSessionTicketKeys(SSLContext context, Path keyFile) throws SSLException {
        SSLSessionContext sessions = context.getServerSessionContext();
        if (!(sessions instanceof SessionContextImpl)) {
            throw new SSLException("not a tlsbridge SSLContext: " + context.getProvider().getName());
        }
        ((SessionContextImpl) sessions).loadTicketKeys(keyFile.toString());
    }

    /**
     * The key-exchange group a tlsbridge session's handshake negotiated, by
     * its JSSE name ({@code "X25519MLKEM768"}, {@code "x25519"},
     * {@code "secp256r1"}, ...; a group SunJSSE has no name for keeps
     * OpenSSL's). Null for sessions of other providers, before the server's
     * hello, for a resumed TLS 1.2 session (its abbreviated handshake
     * exchanges no key; a resumed TLS 1.3 session reports its own exchange),
     * and under TLS 1.2 suites without ECDHE. Works on
     * {@code getSession()}, {@code getHandshakeSession()} and the sessions
     * frameworks hand out (Tomcat's {@code SSLSupport}, Jetty's request).
     */
    public static String negotiatedGroup(javax.net.ssl.SSLSession session) {
        return session instanceof org.tlsbridge.engine.TlsBridgeSession
                ? ((org.tlsbridge.engine.TlsBridgeSession) session).namedGroup() : null;
    }

    /** Where libtlsbridge was loaded from (null before it is). */
    public static String nativeLibraryPath() {
        return NativeLibrary.loadedFrom();
    }
}
