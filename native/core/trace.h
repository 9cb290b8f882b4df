/* Probe points for tlsbridge-probe (USDT, provider "tlsbridge"). Each fires
 * at a coarse boundary only: handshake done, connection closed, error, so a
 * request costs 0-2 hits. With no tracer attached each is one load and a
 * not-taken branch on its semaphore; the argument set-up is inside the branch.
 *
 * Arguments (all 8 bytes; the probe's probe.h mirrors this list):
 *   handshake(engine, duration_ns, flags, protocol_version, suite_id, suite_name,
 *             group_id, group_name)
 *       flags: TB_TRACE_RESUMED | TB_TRACE_CLIENT
 *       group_id: OpenSSL's id of the key-exchange group (0 and "" when none:
 *       a resumed TLS 1.2 session), group_name its TLS name ("X25519MLKEM768")
 *   close(engine, &tb_stats, sizeof(tb_stats))   per-connection totals
 *   error(engine, kind, openssl_code, message)
 */
#ifndef TB_TRACE_H
#define TB_TRACE_H
#include "tb.h"
#include "tb_usdt.h"

#define TB_TRACE_RESUMED 0x1u
#define TB_TRACE_CLIENT 0x2u

TB_USDT_SEMAPHORE(tlsbridge, handshake);
TB_USDT_SEMAPHORE(tlsbridge, close);
TB_USDT_SEMAPHORE(tlsbridge, error);

/* The clock is read around SSL_read/SSL_write only while a tracer listens
 * for connection totals: two vDSO calls per record are ~5% of a 1 KiB
 * wrap+unwrap, a price worth paying only when someone looks. */
static inline uint64_t tb_io_clock(void) {
  return TB_USDT_ENABLED(tlsbridge, close) ? tb_now_ns() : 0;
}

static inline void tb_io_clock_add(uint64_t *total, uint64_t t0) {
  if (t0)
    *total += tb_now_ns() - t0;
}

static inline void tb_trace_handshake(tb_engine *e) {
  if (TB_USDT_ENABLED(tlsbridge, handshake)) {
    const SSL_CIPHER *c = SSL_get_current_cipher(e->ssl);
    uint64_t dur = tb_now_ns() - e->stats.hs_start_ns;
    unsigned flags = (SSL_session_reused(e->ssl) ? TB_TRACE_RESUMED : 0u) |
                     ((e->flags & TB_F_CLIENT) ? TB_TRACE_CLIENT : 0u);
    int gid;
    const char *group = tb_negotiated_group(e->ssl, &gid);
    TB_USDT8(tlsbridge, handshake, e, dur, flags, SSL_version(e->ssl),
             c ? SSL_CIPHER_get_protocol_id(c) : 0u, c ? SSL_CIPHER_get_name(c) : "",
             (unsigned)gid, group ? group : "");
  }
}

static inline void tb_trace_close(tb_engine *e) {
  if (TB_USDT_ENABLED(tlsbridge, close))
    TB_USDT3(tlsbridge, close, e, &e->stats, sizeof e->stats);
}

static inline void tb_trace_error(tb_engine *e) {
  if (TB_USDT_ENABLED(tlsbridge, error))
    TB_USDT4(tlsbridge, error, e, e->err.kind, e->err.code, e->err.msg);
}
#endif
