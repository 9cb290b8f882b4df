#include "test_support.h"
#include "selfsigned.h"

#include <string.h>
#include <arpa/inet.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

int tb_test_failures;

int tb_test_finish(const char *what) {
  if (tb_test_failures) {
    fprintf(stderr, "%s: %d check(s) failed\n", what, tb_test_failures);
    return 1;
  }
  printf("%s tests passed\n", what);
  return 0;
}

int tb_test_key_der(const char *kind, unsigned char **kder, int *klen, unsigned char **cder, int *clen) {
  EVP_PKEY *pk = strcmp(kind, "rsa") == 0 ? EVP_RSA_gen(2048) : EVP_EC_gen("P-256");
  X509 *x = pk ? tb_test_selfsigned(pk, "localhost") : NULL;
  PKCS8_PRIV_KEY_INFO *p8;
  *kder = *cder = NULL;
  if (!pk || !x) {
    EVP_PKEY_free(pk);
    return -1;
  }
  p8 = EVP_PKEY2PKCS8(pk);
  *klen = i2d_PKCS8_PRIV_KEY_INFO(p8, kder);
  *clen = i2d_X509(x, cder);
  PKCS8_PRIV_KEY_INFO_free(p8);
  X509_free(x);
  EVP_PKEY_free(pk);
  return *klen > 0 && *clen > 0 ? 0 : -1;
}

tb_keymat *tb_test_keymat(const char *kind) {
  unsigned char *kder, *cder;
  int klen, clen;
  const uint8_t *certs[1];
  size_t lens[1];
  tb_error err;
  tb_keymat *k = NULL;
  if (tb_test_key_der(kind, &kder, &klen, &cder, &clen) == 0) {
    certs[0] = cder;
    lens[0] = (size_t)clen;
    k = tb_keymat_from_der(kder, (size_t)klen, certs, lens, 1, &err);
    if (!k)
      fprintf(stderr, "keymat: %s\n", err.msg);
  }
  OPENSSL_free(kder);
  OPENSSL_free(cder);
  return k;
}

void tb_test_run_task(tb_engine *e, tb_keymat *key) {
  tb_error err;
  if (e->task == TB_TASK_VERIFY)
    tb_engine_set_verify_result(e, 1, 0);
  else if (e->task == TB_TASK_CERT && key && !(e->flags & TB_F_CLIENT))
    CHECK(tb_keymat_use(e, key, &err) == 0);
  tb_engine_task_done(e);
}

int tb_pair_open(tb_pair *p, SSL_CTX *ctx, const char *kind) {
  tb_error err;
  memset(p, 0, sizeof *p);
  p->key = tb_test_keymat(kind);
  p->client = tb_engine_new(ctx, 1, &err);
  p->server = tb_engine_new(ctx, 0, &err);
  CHECK(ERR_peek_error() == 0);
  return p->key && p->client && p->server ? 0 : -1;
}

void tb_pair_close(tb_pair *p) {
  tb_engine_free(p->client);
  tb_engine_free(p->server);
  tb_keymat_free(p->key);
}

/* Moves whatever one side wraps into the other's inbound queue. */
static int step(tb_engine *e, uint8_t *out, size_t *out_len, uint8_t *in, size_t *in_len,
                tb_keymat *key) {
  tb_result r;
  int progress = 0;
  if (e->task != TB_TASK_NONE) {
    tb_test_run_task(e, key);
    progress = 1;
  }
  /* No engine call leaves anything on OpenSSL's error queue, failures
   * included: the bundled flavour's record path counts on it. */
  CHECK(ERR_peek_error() == 0);
  if (tb_engine_wrap(e, NULL, 0, out + *out_len, (1 << 16) - *out_len, &r) < 0)
    return -1;
  CHECK(ERR_peek_error() == 0);
  *out_len += r.produced;
  progress |= r.produced > 0;
  if (*in_len > 0) {
    uint8_t sink[TB_MAX_PLAINTEXT];
    if (tb_engine_unwrap(e, in, *in_len, sink, sizeof sink, &r) < 0)
      return -1;
    CHECK(ERR_peek_error() == 0);
    memmove(in, in + r.consumed, *in_len - r.consumed);
    *in_len -= r.consumed;
    progress |= r.consumed > 0;
  }
  return progress;
}

int tb_pair_handshake(tb_pair *p) {
  int i;
  tb_engine_begin(p->client);
  tb_engine_begin(p->server);
  for (i = 0; i < 64; i++) {
    int a = step(p->client, p->c2s, &p->c2s_len, p->s2c, &p->s2c_len, p->key);
    int b = step(p->server, p->s2c, &p->s2c_len, p->c2s, &p->c2s_len, p->key);
    if (a < 0 || b < 0)
      return -1;
    if ((p->client->flags & TB_F_HS_DONE) && (p->server->flags & TB_F_HS_DONE) && !a && !b)
      return 0;
  }
  return -1;
}

/* Moves everything `from` has to say (and n bytes of msg) to `to` the way a
 * JSSE caller does: unwrap, and wrap whenever unwrap says NEED_WRAP (the
 * KeyUpdate answers, delivered back at the end). Returns the plaintext
 * bytes `to` got. */
size_t tb_exchange(tb_engine *from, tb_engine *to, const uint8_t *msg, size_t n, uint8_t *got, size_t cap) {
  static uint8_t wire[1 << 18], answer[1 << 16], sink[256];
  tb_result r;
  size_t wlen = 0, off = 0, glen = 0, alen = 0;
  int i;
  for (i = 0; i < 16; i++) {
    CHECK(tb_engine_wrap(from, msg, n, wire + wlen, sizeof wire - wlen, &r) == 0);
    wlen += r.produced;
    msg += r.consumed;
    n -= r.consumed;
    if (r.produced == 0 && n == 0)
      break;
  }
  for (i = 0; i < 64 && off < wlen; i++) {
    CHECK(tb_engine_unwrap(to, wire + off, wlen - off, got + glen, cap - glen, &r) == 0);
    CHECK(r.status == TB_OK);
    CHECK(r.consumed > 0 || r.produced > 0 || r.hs == TB_HS_NEED_WRAP); /* no stall */
    off += r.consumed;
    glen += r.produced;
    while (r.hs == TB_HS_NEED_WRAP && tb_engine_wrap(to, NULL, 0, answer + alen, sizeof answer - alen, &r) == 0)
      alen += r.produced;
  }
  CHECK(off == wlen);
  if (alen > 0) {
    CHECK(tb_engine_unwrap(from, answer, alen, sink, sizeof sink, &r) == 0);
    CHECK(r.consumed == alen && r.produced == 0);
  }
  return glen;
}

static uint8_t *pin_buf(void *arg) { return arg; }
static void unpin_buf(void *arg, uint8_t *p, int commit) { (void)arg, (void)p, (void)commit; }

long tb_test_rd(tb_sock *s, void *buf, size_t n, int64_t timeout_ms, tb_error *err) {
  long rc = tb_sock_read(s, pin_buf, unpin_buf, buf, n, timeout_ms, err);
  CHECK(ERR_peek_error() == 0);
  return rc;
}

long tb_test_wr(tb_sock *s, const void *buf, size_t n, tb_error *err) {
  long rc = tb_sock_write(s, pin_buf, unpin_buf, (void *)buf, n, err);
  CHECK(ERR_peek_error() == 0);
  return rc;
}

void tb_test_loopback(tb_addr *a, int port) {
  memset(a, 0, sizeof *a);
  a->len = 4;
  a->port = port;
  inet_pton(AF_INET, "127.0.0.1", a->bytes);
}

tb_sock *tb_test_listener(tb_addr *a) {
  tb_error err;
  tb_sock *l = tb_sock_new(AF_INET, &err);
  CHECK(l != NULL);
  if (!l)
    return NULL;
  tb_test_loopback(a, 0);
  CHECK(tb_sock_bind(l, a, 1, &err) == 0);
  CHECK(tb_sock_listen(l, 8, &err) == 0);
  CHECK(tb_sock_name(l, 0, a, &err) == 0);
  CHECK(a->port > 0);
  return l;
}

int tb_test_sock_handshake(tb_sock *s, tb_keymat *key) {
  tb_error err;
  int rc;
  while ((rc = tb_sock_handshake(s, 5000, NULL, &err)) > 0)
    tb_test_run_task(s->e, key);
  CHECK(ERR_peek_error() == 0);
  if (rc < 0)
    fprintf(stderr, "handshake: %s\n", err.msg);
  return rc;
}
