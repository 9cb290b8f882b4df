/* See fuzz_driver.h. Every buffer handed to the engine is a heap block of
 * exactly the size the call is told, so ASan sees any byte read or written
 * past what a Java ByteBuffer would allow. */
#include "fuzz_driver.h"
#include "ciphers.h"
#include "session_cache.h"
#include "fuzz_keys.h"

#include <stdlib.h>
#include <string.h>
#include <openssl/pem.h>

static tb_keymat *keys[2]; /* EC, RSA */
static const size_t WRAP_CAP[4] = {TB_MAX_RECORD, 0, 37, 1029};
static const size_t UNWRAP_CAP[4] = {TB_MAX_PLAINTEXT, 0, 13, 1500};
static const unsigned char ALPN[] = "\x02h2\x08http/1.1";

/* A broken contract is a finding: abort so libFuzzer keeps the input. */
#define FZ_ASSERT(c)                                                             \
  do {                                                                           \
    if (!(c)) {                                                                  \
      fprintf(stderr, "%s:%d: contract broken: %s\n", __FILE__, __LINE__, #c);  \
      abort();                                                                   \
    }                                                                            \
  } while (0)
/* No engine call leaves anything on OpenSSL's error queue: the bundled
 * flavour's record path counts on it (tb_err_reset_shared in tb.h). */
#define FZ_QUEUE_EMPTY()                                                         \
  do {                                                                           \
    unsigned long queued_ = ERR_peek_error();                                    \
    if (queued_ != 0) {                                                          \
      char why_[256];                                                            \
      ERR_error_string_n(queued_, why_, sizeof why_);                            \
      fprintf(stderr, "%s:%d: error left queued: %s\n", __FILE__, __LINE__, why_); \
      abort();                                                                   \
    }                                                                            \
  } while (0)

static tb_keymat *load(const char *key_pem, const char *cert_pem) {
  BIO *kb = BIO_new_mem_buf(key_pem, -1), *cb = BIO_new_mem_buf(cert_pem, -1);
  EVP_PKEY *pk = kb ? PEM_read_bio_PrivateKey(kb, NULL, NULL, NULL) : NULL;
  X509 *x = cb ? PEM_read_bio_X509(cb, NULL, NULL, NULL) : NULL;
  PKCS8_PRIV_KEY_INFO *p8 = pk ? EVP_PKEY2PKCS8(pk) : NULL;
  unsigned char *kder = NULL, *cder = NULL;
  int klen = p8 ? i2d_PKCS8_PRIV_KEY_INFO(p8, &kder) : -1, clen = x ? i2d_X509(x, &cder) : -1;
  tb_keymat *k = NULL;
  tb_error err;
  if (klen > 0 && clen > 0) {
    const uint8_t *certs[1] = {cder};
    size_t lens[1] = {(size_t)clen};
    k = tb_keymat_from_der(kder, (size_t)klen, certs, lens, 1, &err);
  }
  OPENSSL_free(kder);
  OPENSSL_free(cder);
  PKCS8_PRIV_KEY_INFO_free(p8);
  X509_free(x);
  EVP_PKEY_free(pk);
  BIO_free(kb);
  BIO_free(cb);
  return k;
}

static int verify_peer(tb_engine *e, STACK_OF(X509) *chain, int *x509_err) {
  const fz_side *s = e->owner;
  *x509_err = X509_V_ERR_CERT_UNTRUSTED;
  return !(s->cfg & FZ_CFG_REJECT);
}
static const tb_hooks HOOKS = {verify_peer};

int fz_init(void) {
  static int done;
  if (done)
    return 0;
  done = 1;
  if (fz_rand_install() != 0)
    return -1;
  tb_set_hooks(&HOOKS);
  keys[0] = load(FZ_EC_KEY, FZ_EC_CERT);
  keys[1] = load(FZ_RSA_KEY, FZ_RSA_CERT);
  return keys[0] && keys[1] ? 0 : -1;
}

static void use_stream(const fz_side *s) { fz_rand_use(s->client ? FZ_RAND_CLIENT : FZ_RAND_SERVER); }

int fz_open(fz_side *s, int client, int cfg) {
  static const int MINV[4] = {TLS1_2_VERSION, TLS1_2_VERSION, TLS1_3_VERSION, TLS1_2_VERSION};
  static const int MAXV[4] = {TLS1_3_VERSION, TLS1_2_VERSION, TLS1_3_VERSION, TLS1_3_VERSION};
  tb_error err;
  int v = cfg & FZ_CFG_VERSION;
  memset(s, 0, sizeof *s);
  s->client = client;
  s->cfg = cfg;
  fz_rand_restart(FZ_RAND_CTX);
  fz_rand_use(FZ_RAND_CTX);
  s->ctx = tb_ctx_new(&err);
  use_stream(s);
  s->e = s->ctx ? tb_engine_new(s->ctx, client, &err) : NULL;
  FZ_QUEUE_EMPTY();
  if (!s->e)
    return -1;
  s->e->owner = s;
  if (tb_configure(s->e->ssl, v == 3 ? "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-AES256-GCM-SHA384" : NULL,
                   v == 3 ? "TLS_CHACHA20_POLY1305_SHA256:TLS_AES_256_GCM_SHA384" : NULL, MINV[v], MAXV[v],
                   &err) != 0)
    return -1;
  FZ_QUEUE_EMPTY();
  /* files the peer's tickets in the client cache (empty: the context is new) */
  if (client)
    tb_engine_set_peer(s->e, "localhost:443");
  if (!client && (cfg & FZ_CFG_CLIENT_AUTH))
    SSL_set_verify(s->e->ssl, SSL_VERIFY_PEER, NULL);
  if (!client && (cfg & FZ_CFG_HELLO_TASK))
    s->e->hello_task = 1;
  if ((cfg & FZ_CFG_ALPN) && tb_set_alpn(s->e, ALPN, sizeof ALPN - 1) != 0)
    return -1;
  FZ_QUEUE_EMPTY();
  return 0;
}

void fz_close(fz_side *s) {
  use_stream(s);
  tb_engine_free(s->e);
  tb_ctx_free(s->ctx);
  FZ_QUEUE_EMPTY();
  free(s->in);
  free(s->out);
  memset(s, 0, sizeof *s);
}

void fz_feed(fz_side *s, const uint8_t *p, size_t n) {
  uint8_t *in;
  if (n == 0)
    return;
  in = malloc(s->in_len + n);
  FZ_ASSERT(in != NULL);
  if (s->in_len)
    memcpy(in, s->in, s->in_len);
  memcpy(in + s->in_len, p, n);
  free(s->in);
  s->in = in;
  s->in_len += n;
}

static void consume(fz_side *s, size_t n) {
  uint8_t *in = NULL;
  FZ_ASSERT(n <= s->in_len);
  if (n == 0)
    return;
  if (s->in_len > n) {
    in = malloc(s->in_len - n);
    FZ_ASSERT(in != NULL);
    memcpy(in, s->in + n, s->in_len - n);
  }
  free(s->in);
  s->in = in;
  s->in_len -= n;
}

static void keep(fz_side *s, const uint8_t *p, size_t n) {
  if (!s->capture || n == 0)
    return;
  if (s->out_len + n > s->out_cap) {
    s->out_cap = (s->out_len + n) * 2;
    s->out = realloc(s->out, s->out_cap);
    FZ_ASSERT(s->out != NULL);
  }
  memcpy(s->out + s->out_len, p, n);
  s->out_len += n;
}

static void check(const fz_side *s, int rc, const tb_result *r, size_t srclen, size_t cap) {
  FZ_ASSERT(rc == 0 || rc == -1);
  FZ_QUEUE_EMPTY();
  FZ_ASSERT(r->consumed <= srclen && r->produced <= cap);
  FZ_ASSERT(r->status >= TB_OK && r->status <= TB_CLOSED);
  FZ_ASSERT(r->hs >= TB_HS_NOT && r->hs <= TB_HS_NEED_UNWRAP);
  if (rc == 0 && (r->status == TB_UNDERFLOW || r->status == TB_OVERFLOW))
    FZ_ASSERT(r->consumed == 0);
  if (rc < 0)
    FZ_ASSERT(s->e->err.kind != TB_ERR_NONE && s->e->err.msg[0] != '\0');
  if (rc == 0 && r->idle_in) {
    /* Java answers the next unwrap of no bytes itself: it must be this */
    tb_result z;
    uint8_t b[16];
    FZ_ASSERT(tb_engine_unwrap(s->e, b, 0, b, sizeof b, &z) == 0);
    FZ_QUEUE_EMPTY();
    FZ_ASSERT(z.status == TB_UNDERFLOW && z.hs == TB_HS_NOT && z.consumed == 0 && z.produced == 0 && z.idle_in);
  }
}

/* One wrap as a JSSE caller makes it: on BUFFER_OVERFLOW it grows the
 * buffer to getPacketBufferSize() and tries again. */
static int wrap(fz_side *s, const uint8_t *src, size_t srclen, int cls, tb_result *r) {
  size_t cap = WRAP_CAP[cls & 3];
  for (;;) {
    uint8_t *dst = malloc(cap ? cap : 1);
    int rc;
    FZ_ASSERT(dst != NULL);
    rc = tb_engine_wrap(s->e, src, srclen, dst, cap, r);
    check(s, rc, r, srclen, cap);
    if (rc == 0 && r->status == TB_OVERFLOW && cap < TB_MAX_RECORD) {
      free(dst);
      cap = TB_MAX_RECORD;
      continue;
    }
    if (rc == 0 && r->status == TB_OVERFLOW)
      FZ_ASSERT(r->produced == 0);
    if (rc == 0)
      keep(s, dst, r->produced);
    else
      s->failures++;
    free(dst);
    return rc;
  }
}

static int unwrap(fz_side *s, int cls, tb_result *r) {
  size_t cap = UNWRAP_CAP[cls & 3];
  for (;;) {
    uint8_t *dst = malloc(cap ? cap : 1);
    int rc;
    FZ_ASSERT(dst != NULL);
    rc = tb_engine_unwrap(s->e, s->in, s->in_len, dst, cap, r);
    check(s, rc, r, s->in_len, cap);
    free(dst);
    if (rc == 0 && r->status == TB_OVERFLOW && cap < TB_MAX_PLAINTEXT) {
      cap = TB_MAX_PLAINTEXT;
      continue;
    }
    if (rc < 0)
      s->failures++;
    consume(s, r->consumed);
    return rc;
  }
}

/* A KeyManager/TrustManager answering the delegated task. */
static void run_task(fz_side *s) {
  tb_engine *e = s->e;
  tb_error err;
  int reject = (s->cfg & FZ_CFG_REJECT) != 0;
  if (e->task == TB_TASK_VERIFY)
    tb_engine_set_verify_result(e, !reject, reject ? X509_V_ERR_CERT_UNTRUSTED : 0);
  else if (e->task == TB_TASK_CERT && (!s->client || (s->cfg & FZ_CFG_CLIENT_AUTH))) {
    tb_keymat_use(e, keys[0], &err);
    if (!s->client)
      tb_keymat_use(e, keys[1], &err);
  } else if (e->task == TB_TASK_HELLO && (s->cfg & FZ_CFG_ALPN)) {
    memcpy(e->alpn_choice, "h2", 2);
    e->alpn_choice_len = 2;
  }
  FZ_QUEUE_EMPTY();
  tb_engine_task_done(e);
  FZ_QUEUE_EMPTY();
}

void fz_pump(fz_side *s, int classes) {
  int i;
  use_stream(s);
  for (i = 0; i < 48; i++) {
    int hs = tb_engine_hs_status(s->e, 0);
    FZ_QUEUE_EMPTY();
    tb_result r;
    if (hs == TB_HS_NEED_TASK) {
      run_task(s);
      continue;
    }
    if (hs == TB_HS_NEED_WRAP) {
      if (wrap(s, NULL, 0, classes, &r) == 0 && r.produced == 0 && r.consumed == 0)
        break;
    } else if (s->in_len > 0) {
      if (unwrap(s, classes >> 2, &r) == 0 && r.produced == 0 && r.consumed == 0)
        break;
    } else {
      break;
    }
  }
}

static void write_app(fz_side *s, size_t n, int cls) {
  uint8_t *p = malloc(n);
  size_t off = 0;
  int i;
  FZ_ASSERT(p != NULL);
  for (i = 0; (size_t)i < n; i++)
    p[i] = (uint8_t)(i * 7);
  for (i = 0; i < 8 && off < n; i++) {
    tb_result r;
    if (wrap(s, p + off, n - off, cls, &r) != 0 || (r.consumed == 0 && r.produced == 0))
      break;
    off += r.consumed;
  }
  free(p);
}

void fz_op(fz_side *s, int b, const uint8_t *data, size_t n) {
  int cls = (b >> 3) & 15;
  use_stream(s);
  switch (b & 7) {
  case 0: fz_feed(s, data, n); break;
  case 1: break;
  case 2: write_app(s, (size_t)((b >> 3) + 1) * (size_t)((b >> 3) + 1) * 23, 0); cls = 0; break;
  case 3: tb_engine_close_outbound(s->e); break;
  case 4: tb_engine_close_inbound(s->e); break;
  case 5: tb_engine_begin(s->e); break;
  case 6: if (!s->client) tb_engine_request_pha(s->e, b & 8); break;
  case 7: fz_feed(s, data, n); return;
  }
  FZ_QUEUE_EMPTY();
  fz_pump(s, cls);
}

void fz_start(fz_side *s) {
  use_stream(s);
  if (s->client) {
    tb_engine_begin(s->e);
    FZ_QUEUE_EMPTY();
    fz_pump(s, 0);
  }
}

int fz_run(int client, const uint8_t *data, size_t size) {
  fz_side s;
  size_t pos = 1;
  int ok;
  if (size < 1 || fz_init() != 0)
    return 0;
  fz_rand_reset();
  if (fz_open(&s, client, data[0]) != 0) {
    fz_close(&s);
    return 0;
  }
  fz_start(&s);
  while (pos < size) {
    int b = data[pos++];
    size_t n = 0;
    if ((b & 7) == 0 || (b & 7) == 7) {
      if (pos + 2 <= size)
        n = (size_t)data[pos] << 8 | data[pos + 1];
      pos = pos + 2 <= size ? pos + 2 : size;
      if (n > size - pos)
        n = size - pos;
    }
    fz_op(&s, b, data + pos, n);
    pos += n;
  }
  fz_pump(&s, 0);
  ok = (s.e->flags & TB_F_HS_DONE) && s.failures == 0;
  fz_close(&s);
  return ok;
}
