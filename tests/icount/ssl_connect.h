/* Two in-process OpenSSL endpoints brought to the end of a handshake, for
 * the harnesses that count the plain-OpenSSL floor (tests/icount/icount.c,
 * bench/recordpath/recordpath.c): the client and server SSL already have
 * their BIOs. */
#ifndef TB_ICOUNT_SSL_CONNECT_H
#define TB_ICOUNT_SSL_CONNECT_H
#include <openssl/err.h>
#include <openssl/ssl.h>

/* 1 when both finished; the server's session tickets are then taken in by
 * the client as its first read would, so they stay out of later counts. */
static inline int ssl_connect_pair(SSL *c, SSL *s) {
  unsigned char byte;
  int i, rc = 0, rs = 0, ok;
  SSL_set_connect_state(c);
  SSL_set_accept_state(s);
  for (i = 0; i < 64 && (rc != 1 || rs != 1); i++) {
    if (rc != 1)
      rc = SSL_do_handshake(c);
    if (rs != 1)
      rs = SSL_do_handshake(s);
  }
  ok = rc == 1 && rs == 1 && SSL_read(c, &byte, 1) <= 0 && SSL_get_error(c, -1) == SSL_ERROR_WANT_READ;
  ERR_clear_error();
  return ok;
}
#endif
