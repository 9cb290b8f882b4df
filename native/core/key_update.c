/* A locally requested TLS 1.3 key update: the one primitive behind
 * beginHandshake()/startHandshake() on an established TLS 1.3 connection and
 * anything else that wants fresh traffic keys (key-usage limits). */
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
      tb_err_from_openssl(&e->err, TB_ERR_SSL, "cannot send the KeyUpdate");
      return -1;
    }
    tb_err_reset();
  }
  if (!(e->flags & TB_F_SOCKET) && e->io.spill_len > 0)
    e->flags |= TB_F_POST_HS | TB_F_FIN_PENDING;
  return 0;
}
