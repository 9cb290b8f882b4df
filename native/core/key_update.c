/* A locally requested TLS 1.3 key update: the one primitive behind
 * beginHandshake()/startHandshake() on an established TLS 1.3 connection and
 * behind key-usage limits (jdk.tls.keyLimits): before a write would take the
 * write key past its limit, a KeyUpdate asking the peer to re-key too goes
 * out first. TLS 1.2 has no way to re-key without renegotiation, which
 * tlsbridge refuses, so its keys have no limit (SunJSSE applies
 * jdk.tls.keyLimits to TLS 1.3 only as well). */
#include "tb.h"

int tb_key_update(tb_engine *e, int request_peer) {
  int rc;
  if (!(e->flags & TB_F_HS_DONE) || SSL_version(e->ssl) < TLS1_3_VERSION) {
    tb_err_set(&e->err, TB_ERR_STATE, "a key update needs an established TLS 1.3 connection");
    return -1;
  }
  tb_err_reset();
  if (!SSL_key_update(e->ssl, request_peer ? SSL_KEY_UPDATE_REQUESTED : SSL_KEY_UPDATE_NOT_REQUESTED)) {
    tb_err_from_openssl(&e->err, TB_ERR_SSL, "key update failed");
    return -1;
  }
  /* SSL_key_update only schedules the message: write it now, so an engine
   * says NEED_WRAP (the KeyUpdate waits in its queue) and a native socket
   * puts it on the wire before startHandshake returns, as SunJSSE does. A
   * descriptor that takes nothing now leaves it to the next write. */
  rc = SSL_do_handshake(e->ssl);
  if (rc <= 0) {
    int se = tb_ssl_error(e->ssl, rc);
    if (se != SSL_ERROR_WANT_WRITE && se != SSL_ERROR_WANT_READ) {
      /* the new key could not be taken (record sealing) or the write failed:
       * nothing more may be sent, so the connection has failed; the caller
       * reports it */
      tb_err_from_openssl(&e->err, TB_ERR_SSL, "cannot send the KeyUpdate");
      e->flags |= (e->flags & TB_F_SOCKET) ? TB_F_FAILED : TB_F_FAILED | TB_F_IN_DONE | TB_F_OUT_CLOSING;
      return -1;
    }
    tb_err_reset();
  }
  if (!(e->flags & TB_F_SOCKET) && e->io.spill_len > 0)
    e->flags |= TB_F_POST_HS | TB_F_FIN_PENDING;
  /* every KeyUpdate we send, ours or the answer to the peer's, is a new
   * write key: its count starts again */
  e->key_left = e->key_limit;
  return 0;
}

void tb_key_limits(tb_engine *e, uint64_t aes_gcm, uint64_t chacha20) {
  e->key_limit_gcm = aes_gcm;
  e->key_limit_chacha = chacha20;
}

void tb_key_limit_start(tb_engine *e) {
  const SSL_CIPHER *c = SSL_get_current_cipher(e->ssl);
  int nid = c ? SSL_CIPHER_get_cipher_nid(c) : NID_undef;
  uint64_t limit = 0;
  if (e->key_limit != 0)
    return; /* a later handshake step (post-handshake auth) keeps the key */
  if (SSL_version(e->ssl) >= TLS1_3_VERSION) {
    if (nid == NID_aes_128_gcm || nid == NID_aes_256_gcm)
      limit = e->key_limit_gcm;
    else if (nid == NID_chacha20_poly1305)
      limit = e->key_limit_chacha;
  }
  e->key_limit = limit ? limit : UINT64_MAX;
  e->key_left = e->key_limit;
}

size_t tb_key_budget(tb_engine *e, size_t n) {
  if (e->key_left == 0) {
    if (tb_key_update(e, 1) < 0) {
      /* nothing more may be sent under the spent key */
      e->flags |= TB_F_FAILED;
      if (!(e->flags & TB_F_SOCKET)) {
        e->error_pending = 1;
        e->flags |= TB_F_IN_DONE | TB_F_OUT_CLOSING;
      }
      return 0;
    }
    if (!(e->flags & TB_F_SOCKET) && e->io.spill_len > 0)
      return 0;
  }
  return n > e->key_left ? (size_t)e->key_left : n;
}
