/* The handshake side of an engine: starting it (a TLS 1.3 key update once
 * established), one OpenSSL handshake step at a time with delegated tasks,
 * the handshake status a JSSE caller sees after each call, and TLS 1.3
 * post-handshake client authentication. */
#include "tb.h"
#include "trace.h"

#include <openssl/err.h>
#include <openssl/rand.h>

int tb_engine_begin(tb_engine *e) {
  if (e->flags & (TB_F_OUT_CLOSING | TB_F_IN_DONE)) {
    tb_err_set(&e->err, TB_ERR_CLOSED, "engine is closed");
    return -1;
  }
  if (e->flags & TB_F_HS_DONE) {
    /* TLS 1.3 has no renegotiation: a new handshake request becomes a key
     * update, as SunJSSE does. TLS 1.2 renegotiation is refused (SunJSSE
     * renegotiates; docs/security.md says why we do not). */
    if (SSL_version(e->ssl) >= TLS1_3_VERSION)
      return tb_key_update(e, 1);
    tb_err_set(&e->err, TB_ERR_SSL, "renegotiation is not supported");
    return -1;
  }
  if (!(e->flags & TB_F_STARTED)) {
    e->flags |= TB_F_STARTED;
    e->stats.hs_start_ns = tb_now_ns();
  }
  return 0;
}

/* TLS 1.2 sessions carried by tickets have no id in OpenSSL, but JSSE
 * promises one (Tomcat exposes it as ssl_session_id). A random id is given
 * to the connection's own new session; it travels inside the ticket, so a
 * resumed session reports the same id. */
static void give_session_id(tb_engine *e) {
  SSL_SESSION *s = SSL_get_session(e->ssl);
  unsigned int len = 0;
  unsigned char id[32];
  if (!s || SSL_session_reused(e->ssl))
    return;
  SSL_SESSION_get_id(s, &len);
  if (len == 0 && RAND_bytes(id, sizeof id) == 1)
    SSL_SESSION_set1_id(s, id, sizeof id);
}

static int hs_step(tb_engine *e);

/* One handshake step: 1 finished, 0 needs I/O, 2 needs a task, -1 failed.
 * With a private libcrypto the queue is emptied after a step that goes on
 * instead of before each: whatever a callback or a failure OpenSSL tolerated
 * pushed must not stay for the record path, on this engine or another of
 * the thread's, which does not look (tb_err_reset_shared). A failed step
 * drained it into its message. */
int tb_hs_step(tb_engine *e) {
  int rc = hs_step(e);
#ifdef TB_OPENSSL_PRIVATE
  if (rc >= 0)
    tb_err_reset();
#endif
  return rc;
}

static int hs_step(tb_engine *e) {
  int rc, ssl_err;
  /* Handshake CPU time is summed only while a tracer listens for connection
   * totals, as the record path's is: a handshake takes several steps, each
   * two clock reads. */
  uint64_t t0 = tb_io_clock();
  if (!(e->flags & TB_F_STARTED)) {
    e->flags |= TB_F_STARTED;
    e->stats.hs_start_ns = t0 ? t0 : tb_now_ns();
  }
  tb_err_reset_shared();
  rc = SSL_do_handshake(e->ssl);
  tb_io_clock_add(&e->stats.ns_handshake, t0);
  if (e->io.spill_failed) {
    tb_engine_fail_msg(e, TB_ERR_SSL, "handshake output exceeds the engine's queue: the peer or caller is not draining it");
    return -1;
  }
  if (rc == 1) {
    e->flags |= TB_F_HS_DONE | TB_F_FIN_PENDING;
    if (e->client_speaks_first && !(e->flags & TB_F_CLIENT) && e->io.spill_len > 0 &&
        SSL_version(e->ssl) < TLS1_3_VERSION)
      e->flags |= TB_F_FIN_AT_UNWRAP;
    e->task = TB_TASK_NONE;
    give_session_id(e);
    tb_key_limit_start(e);
    tb_trace_handshake(e);
    return 1;
  }
  ssl_err = tb_ssl_error(e->ssl, rc);
  switch (ssl_err) {
  case SSL_ERROR_WANT_READ:
  case SSL_ERROR_WANT_WRITE:
    return 0;
  case SSL_ERROR_WANT_RETRY_VERIFY:
    e->task = TB_TASK_VERIFY;
    return 2;
  case SSL_ERROR_WANT_X509_LOOKUP:
    e->task = TB_TASK_CERT;
    return 2;
  case SSL_ERROR_WANT_CLIENT_HELLO_CB:
    e->task = TB_TASK_HELLO;
    return 2;
  case SSL_ERROR_ZERO_RETURN:
    /* close_notify in the middle of a handshake: the handshake is over,
     * not waiting forever for a flight that will never come. */
    e->flags |= TB_F_PEER_CLOSED;
    tb_engine_fail_msg(e, TB_ERR_HANDSHAKE, "peer sent close_notify during the handshake");
    return -1;
  default:
    if (ERR_peek_error() == 0)
      tb_engine_fail_msg(e, TB_ERR_HANDSHAKE, "handshake failed: unexpected end of input or internal error");
    else
      tb_engine_fail(e, TB_ERR_HANDSHAKE, "handshake failed");
    return -1;
  }
}

/* A TLS 1.3 server's handshake ends when the client's Finished is read;
 * what OpenSSL queued with it is the NewSessionTickets, post-handshake
 * messages. FINISHED is reported first and NEED_WRAP after: a caller that
 * goes to the application on FINISHED (Tomcat's SecureNioChannel) serves
 * the request at once, and the tickets leave ahead of the first response
 * (wrap drains the queue first), instead of costing Tomcat a wrap, a
 * poller round trip for OP_WRITE and a socket write of their own. */
static int finished_before_tickets(tb_engine *e, uint32_t f) {
  return (f & TB_F_FIN_PENDING) && !(f & (TB_F_CLIENT | TB_F_PHA | TB_F_POST_HS)) &&
         SSL_version(e->ssl) >= TLS1_3_VERSION;
}

/* client_speaks_first (the Tomcat adapter's engines): a TLS 1.2 server says
 * NEED_UNWRAP after the wrap of its last flight (ticket, ChangeCipherSpec,
 * Finished) and FINISHED from the next unwrap, reading nothing if no record
 * is there. Tomcat's channels write a handshake wrap at once only on
 * NEED_UNWRAP (else a poller round trip for OP_WRITE comes first), and the
 * flight still leaves within the handshake for a caller that stops wrapping
 * on FINISHED (NIO2). HTTP's client speaks next anyway. */
int tb_engine_hs_status(tb_engine *e, int consume_finished) {
  uint32_t f = e->flags;
  int queued = e->io.spill_len > 0;
  if (f & TB_F_FAILED)
    return queued ? TB_HS_NEED_WRAP : TB_HS_NOT;
  if (e->task != TB_TASK_NONE)
    return TB_HS_NEED_TASK;
  if (!(f & TB_F_STARTED))
    return TB_HS_NOT;
  if (!(f & TB_F_HS_DONE)) {
    if (f & TB_F_OUT_CLOSING)
      return queued ? TB_HS_NEED_WRAP : TB_HS_NOT;
    if (queued)
      return TB_HS_NEED_WRAP;
    /* A client that has not written its ClientHello yet must wrap first. */
    if ((f & TB_F_CLIENT) && SSL_in_before(e->ssl))
      return TB_HS_NEED_WRAP;
    return TB_HS_NEED_UNWRAP;
  }
  if ((f & TB_F_FIN_AT_UNWRAP) && !(f & TB_F_OUT_CLOSING))
    return queued ? TB_HS_NEED_WRAP : TB_HS_NEED_UNWRAP;
  if (queued && !finished_before_tickets(e, f))
    return TB_HS_NEED_WRAP;
  if (f & TB_F_PHA)
    return TB_HS_NEED_UNWRAP;
  if (f & TB_F_FIN_PENDING) {
    if (consume_finished)
      e->flags &= ~(TB_F_FIN_PENDING | TB_F_POST_HS);
    return TB_HS_FINISHED;
  }
  return TB_HS_NOT;
}

/* TLS 1.3 post-handshake authentication: a server asks an established
 * client for its certificate (Tomcat's CLIENT-CERT on one path). */
int tb_engine_request_pha(tb_engine *e, int need) {
  int mode = SSL_VERIFY_PEER | SSL_VERIFY_POST_HANDSHAKE | (need ? SSL_VERIFY_FAIL_IF_NO_PEER_CERT : 0);
  if ((e->flags & TB_F_CLIENT) || !(e->flags & TB_F_HS_DONE) || SSL_version(e->ssl) < TLS1_3_VERSION) {
    tb_err_set(&e->err, TB_ERR_STATE, "post-handshake authentication needs an established TLS 1.3 server");
    return -1;
  }
  SSL_set_verify(e->ssl, mode, NULL);
  e->verify_result = -1;
  ERR_clear_error();
  if (!SSL_verify_client_post_handshake(e->ssl)) {
    tb_err_from_openssl(&e->err, TB_ERR_SSL, "cannot request a client certificate");
    return -1;
  }
  /* writes the CertificateRequest into the spill queue: NEED_WRAP */
  if (SSL_do_handshake(e->ssl) <= 0 && e->io.spill_len == 0) {
    tb_err_from_openssl(&e->err, TB_ERR_SSL, "cannot send the CertificateRequest");
    return -1;
  }
  e->flags |= TB_F_PHA;
  return 0;
}

void tb_engine_set_verify_result(tb_engine *e, int ok, int x509_err) {
  e->verify_result = ok ? 1 : 0;
  e->verify_error = x509_err;
}
