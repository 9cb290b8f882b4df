/* OpenSSL's error queue and the record path: what another library leaves on
 * the thread's queue, and what tlsbridge itself must never leave there. */
#include "test_support.h"

#include <string.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pkcs12.h>

/* An entry some other code left on this thread's OpenSSL error queue must
 * not fail an established connection. The system flavours empty the queue
 * before SSL_read/SSL_write; the bundled one (TB_OPENSSL_PRIVATE, whose
 * queue no other code reaches) leaves it there. OpenSSL empties it itself
 * for post-handshake messages (its state machine starts with
 * ERR_clear_error); a bare retry is read by tb_ssl_error before the queue. */
static void test_foreign_queue_entry(void) {
  SSL_CTX *ctx;
  tb_error err;
  tb_pair p;
  uint8_t got[64];
  int round, n;
  ctx = tb_ctx_new(&err);
  CHECK(tb_pair_open(&p, ctx, "ec") == 0);
  CHECK(tb_pair_handshake(&p) == 0);
  for (round = 0; round < 4; round++) {
    tb_engine *a = round & 1 ? p.client : p.server, *b = round & 1 ? p.server : p.client;
    if (round >= 2) /* a KeyUpdate ahead of the data: SSL_read answers WANT_READ for it */
      CHECK(SSL_key_update(a->ssl, SSL_KEY_UPDATE_REQUESTED) == 1 && SSL_do_handshake(a->ssl) == 1);
    ERR_raise_data(ERR_LIB_SYS, ERR_R_SYS_LIB, "left by another library");
    CHECK(tb_exchange(a, b, (const uint8_t *)"unharmed", 8, got, sizeof got) == 8);
    CHECK(memcmp(got, "unharmed", 8) == 0);
#ifdef TB_OPENSSL_PRIVATE
    CHECK(round >= 2 || ERR_peek_error() != 0); /* the record path did not look */
#else
    CHECK(ERR_peek_error() == 0);
#endif
    ERR_clear_error();
  }
  ERR_raise_data(ERR_LIB_SYS, ERR_R_SYS_LIB, "left by another library");
  n = SSL_read(p.client->ssl, got, sizeof got); /* no input: a retry */
  CHECK(n <= 0 && SSL_get_error(p.client->ssl, n) == SSL_ERROR_SYSCALL);
  CHECK(tb_ssl_error(p.client->ssl, n) == SSL_ERROR_WANT_READ);
  ERR_clear_error();
  tb_pair_close(&p);
  tb_ctx_free(ctx);
}

static int count(const char *hay, const char *needle) {
  int n = 0;
  for (; (hay = strstr(hay, needle)) != NULL; hay++)
    n++;
  return n;
}

/* OpenSSL 3's decoders queue the same reasons once per structure they try
 * (a wrong key password gives "bad decrypt; cipherfinal error" twice): the
 * message gives each reason once, in queue order, and drains the queue. */
static void test_message_names_each_reason_once(void) {
  tb_error err;
  int i;
  ERR_clear_error();
  for (i = 0; i < 2; i++) {
    ERR_raise(ERR_LIB_EVP, EVP_R_BAD_DECRYPT);
    ERR_raise_data(ERR_LIB_PKCS12, PKCS12_R_PKCS12_CIPHERFINAL_ERROR, "maybe wrong password");
  }
  ERR_raise_data(ERR_LIB_PKCS12, PKCS12_R_PKCS12_CIPHERFINAL_ERROR, "other data");
  tb_err_from_openssl(&err, TB_ERR_SSL, "cannot decrypt");
  CHECK(ERR_peek_error() == 0);
  CHECK(err.kind == TB_ERR_SSL && ERR_GET_REASON(err.code) == EVP_R_BAD_DECRYPT);
  CHECK(count(err.msg, "bad decrypt") == 1);
  CHECK(count(err.msg, "maybe wrong password") == 1);
  CHECK(count(err.msg, "other data") == 1); /* same reason, other detail: kept */
  CHECK(strncmp(err.msg, "cannot decrypt: bad decrypt (", 29) == 0);
  if (count(err.msg, "bad decrypt") != 1)
    fprintf(stderr, "message: %s\n", err.msg);
}

int main(void) {
  test_foreign_queue_entry();
  test_message_names_each_reason_once();
  return tb_test_finish("error queue");
}
