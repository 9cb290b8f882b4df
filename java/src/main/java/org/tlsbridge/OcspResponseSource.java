package org.tlsbridge;

/**
 * A KeyManager that also implements this interface supplies the OCSP
 * response a tlsbridge server staples for each alias (when the client asks
 * for one). Without it, responses are read from
 * {@code <tlsbridge.ocsp.dir>/<alias>.der} when that property is set (the
 * key store alias: NewSunX509's "uid.builder." prefix is dropped), and
 * re-read when the file changes.
 */
public interface OcspResponseSource {
    /** The DER-encoded OCSPResponse for the alias, or null for none. */
    byte[] ocspResponse(String alias);
}
