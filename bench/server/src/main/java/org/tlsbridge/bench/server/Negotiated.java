package org.tlsbridge.bench.server;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * What the server actually negotiated (protocol, suite and, where the server
 * can tell, key-exchange group), counted on a sample of requests.
 *
 * <p>Reading Tomcat's SSL request attributes populates all of them at once
 * (peer certificates included, which throws inside the provider when there
 * are none), so doing it on every request would add a per-request cost that
 * differs between providers. A sample is enough to prove which protocol and
 * suite a cell ran with; every request is still counted.
 */
final class Negotiated {
    /** Every request up to this count is checked, then one in {@link #EVERY}. */
    private static final long FIRST = 64;
    private static final long EVERY = 256;

    private final LongAdder requests = new LongAdder();
    private final AtomicLong seq = new AtomicLong();
    private final Map<String, LongAdder> seen = new ConcurrentHashMap<>();

    /**
     * A cell measured after a long warm-up may serve fewer than EVERY
     * requests, so a count alone can leave it without a single sample (and
     * unverified): one request every GAP_NANOS is checked too.
     */
    private static final long GAP_NANOS = 100_000_000L;
    private volatile long lastCheck = System.nanoTime();

    boolean shouldCheck() {
        requests.increment();
        long n = seq.incrementAndGet();
        long now = System.nanoTime();
        if (n <= FIRST || n % EVERY == 0 || now - lastCheck >= GAP_NANOS) {
            lastCheck = now;
            return true;
        }
        return false;
    }

    /** group: the key-exchange group where the server can tell (tlsbridge's Tomcat implementation), else null. */
    void record(String protocol, String suite, String group) {
        String key = (protocol == null ? "plain" : protocol) + " " + (suite == null ? "-" : suite)
                + (group == null ? "" : " " + group);
        seen.computeIfAbsent(key, k -> new LongAdder()).increment();
    }

    private volatile String tlsLibrary;

    /** tlsbridge servers: the OpenSSL version and the native library file that serve this process. */
    void tlsLibrary(String openssl, String library) {
        tlsLibrary = "{\"openssl\":\"" + openssl.replace("\"", "") + "\",\"library\":\""
                + String.valueOf(library).replace("\"", "").replace("\\", "/") + "\"}";
    }

    String tlsLibrary() {
        return tlsLibrary;
    }

    private volatile String peerProvider;

    /** The peer providers' proof that they serve this process (PeerProviders), as JSON. */
    void peerProvider(String json) {
        peerProvider = json;
    }

    String json() {
        StringBuilder sb = new StringBuilder(128);
        sb.append("{\"requests\":").append(requests.sum());
        if (peerProvider != null) {
            sb.append(",\"peer_provider\":").append(peerProvider);
        }
        if (tlsLibrary != null) {
            sb.append(",\"tls_library\":").append(tlsLibrary);
        }
        sb.append(",\"negotiated\":{");
        Map<String, Long> sorted = new TreeMap<>();
        seen.forEach((k, v) -> sorted.put(k, v.sum()));
        boolean first = true;
        for (Map.Entry<String, Long> e : sorted.entrySet()) {
            if (!first) {
                sb.append(',');
            }
            first = false;
            sb.append('"').append(e.getKey().replace("\"", "")).append("\":").append(e.getValue());
        }
        return sb.append("}}").toString();
    }
}
