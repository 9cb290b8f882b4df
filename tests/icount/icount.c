/* Instruction-count harness (run under valgrind --tool=callgrind by
 * bench/runner/icount.py): a full TLS 1.3 handshake, resumed handshakes
 * (TLS 1.3 ticket, TLS 1.2 ticket, TLS 1.2 session id), and 1 KiB and
 * 16 KiB wrap+unwrap pairs (and 1 KiB over TLS 1.2), through two tlsbridge
 * engines and through plain OpenSSL (SSL_write/SSL_read over a BIO pair:
 * the floor an engine cannot beat); and a socket server's keep-alive
 * request over loopback TCP, TLS 1.3 and 1.2 (icount_socket.c), against
 * OpenSSL on the descriptor. Built with -DICOUNT_HEAP, it counts
 * each region's heap calls instead ("icount heap" lines).
 * Each measured region is bracketed by callgrind's collection toggle and
 * dumped under its own name, so setup and warm-up stay outside the counts.
 * Randomness and keys are the fuzzers' fixed ones: the same OpenSSL build
 * gives the same count on every run, however busy the machine is.
 *
 *   icount [pairs]   pairs per wrap+unwrap region, and requests per socket
 *                    region (default 64)
 *
 * Run natively it checks every region's bytes and prints "icount ok". */
#include "icount.h"
#include "fuzz_driver.h"
#include "ciphers.h"
#include "fuzz_keys.h"
#include "session_cache.h"
#include "ssl_connect.h"

#include <cpuid.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/pem.h>
#include <valgrind/callgrind.h>

#define BIO_RING (1 << 17)

uint8_t src[TB_MAX_PLAINTEXT], plain[TB_MAX_PLAINTEXT];
static uint8_t net[1 << 17];

#ifdef ICOUNT_HEAP
/* Built with ICOUNT_HEAP (a second executable, run without valgrind so the
 * instruction counts stay free of it): every heap call of the process
 * (OpenSSL's, tlsbridge's, libc's) goes through these, so a region's
 * allocations are counted whoever makes them; glibc's entry points do the
 * work. */
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
static struct {
  int on;
  unsigned long allocs, frees;
  unsigned long long bytes;
} heap;

void *malloc(size_t n) {
  if (heap.on)
    heap.allocs++, heap.bytes += n;
  return __libc_malloc(n);
}
void *calloc(size_t n, size_t m) {
  if (heap.on)
    heap.allocs++, heap.bytes += n * m;
  return __libc_calloc(n, m);
}
void *realloc(void *p, size_t n) {
  if (heap.on)
    heap.allocs++, heap.bytes += n;
  return __libc_realloc(p, n);
}
void free(void *p) {
  if (heap.on && p)
    heap.frees++;
  __libc_free(p);
}

void region_start(void) {
  memset(&heap, 0, sizeof heap);
  heap.on = 1;
}
void region_pause(void) { heap.on = 0; }
void region_resume(void) { heap.on = 1; }
void region_end(const char *name) {
  heap.on = 0;
  printf("icount heap %s: %lu allocs %llu bytes %lu frees\n", name, heap.allocs, heap.bytes, heap.frees);
}
#else
void region_start(void) { CALLGRIND_TOGGLE_COLLECT; }
void region_pause(void) { CALLGRIND_TOGGLE_COLLECT; }
void region_resume(void) { CALLGRIND_TOGGLE_COLLECT; }
void region_end(const char *name) {
  CALLGRIND_TOGGLE_COLLECT;
  CALLGRIND_DUMP_STATS_AT(name);
}
#endif

void count_region(const char *name, void (*op)(void *arg, int counted), void *arg, int times, int paused) {
  int i;
  for (i = 0; i < WARM; i++)
    op(arg, 0);
  region_start();
  if (paused)
    region_pause();
  for (i = 0; i < times; i++)
    op(arg, 1);
  if (paused)
    region_resume();
  region_end(name);
}

/* A wrap+unwrap pair's ends (tb_engine or SSL) and size. */
typedef struct pair_arg {
  void *c, *s;
  size_t n;
} pair_arg;

/* Region "<who> pair <tag><n> x<pairs>": `pairs` wrap+unwrap pairs of n bytes. */
static void pair_region(const char *who, void (*pair)(void *, int), void *c, void *s, size_t n, const char *tag,
                        int pairs) {
  char name[64];
  pair_arg p = {c, s, n};
  snprintf(name, sizeof name, "%s pair %s%zu x%d", who, tag, n, pairs);
  count_region(name, pair, &p, pairs, 0);
  NEED(memcmp(plain, src, n) == 0);
}

static EVP_PKEY *pem_key(const char *pem) {
  BIO *b = BIO_new_mem_buf(pem, -1);
  EVP_PKEY *k = PEM_read_bio_PrivateKey(b, NULL, NULL, NULL);
  BIO_free(b);
  return k;
}

static X509 *pem_cert(const char *pem) {
  BIO *b = BIO_new_mem_buf(pem, -1);
  X509 *x = PEM_read_bio_X509(b, NULL, NULL, NULL);
  BIO_free(b);
  return x;
}

static tb_keymat *keymat(const char *key_pem, const char *cert_pem) {
  EVP_PKEY *pk = pem_key(key_pem);
  X509 *x = pem_cert(cert_pem);
  PKCS8_PRIV_KEY_INFO *p8 = EVP_PKEY2PKCS8(pk);
  unsigned char *kder = NULL, *cder = NULL;
  int klen = i2d_PKCS8_PRIV_KEY_INFO(p8, &kder), clen = i2d_X509(x, &cder);
  const uint8_t *certs[1] = {cder};
  size_t lens[1] = {(size_t)clen};
  tb_error err;
  tb_keymat *k = klen > 0 && clen > 0 ? tb_keymat_from_der(kder, (size_t)klen, certs, lens, 1, &err) : NULL;
  OPENSSL_free(kder);
  OPENSSL_free(cder);
  PKCS8_PRIV_KEY_INFO_free(p8);
  X509_free(x);
  EVP_PKEY_free(pk);
  return k;
}

/* ---- tlsbridge: two engines, records moved by the harness as a JSSE caller would ---- */

typedef struct tb_side {
  tb_engine *e;
  uint8_t in[1 << 16];
  size_t in_len;
} tb_side;

static tb_engine *tb_open(SSL_CTX *ctx, int client, int version) {
  tb_error err;
  tb_engine *e = tb_engine_new(ctx, client, &err);
  NEED(e != NULL);
  NEED(tb_configure(e->ssl, version == TLS1_2_VERSION ? SUITE12 : NULL, SUITE, version, version, &err) == 0);
  return e;
}

/* One round for one side: answer a task, wrap what it has for the peer,
 * unwrap what the peer sent. 1 when anything moved. */
static int tb_step(tb_side *s, tb_side *peer, tb_keymat *key) {
  tb_result r;
  tb_error err;
  int moved = 0;
  if (s->e->task != TB_TASK_NONE) {
    if (s->e->task == TB_TASK_VERIFY)
      tb_engine_set_verify_result(s->e, 1, 0);
    else if (s->e->task == TB_TASK_CERT && !(s->e->flags & TB_F_CLIENT))
      NEED(tb_keymat_use(s->e, key, &err) == 0);
    tb_engine_task_done(s->e);
    moved = 1;
  }
  NEED(tb_engine_wrap(s->e, NULL, 0, peer->in + peer->in_len, sizeof peer->in - peer->in_len, &r) == 0);
  peer->in_len += r.produced;
  moved |= r.produced > 0;
  if (s->in_len > 0) {
    NEED(tb_engine_unwrap(s->e, s->in, s->in_len, plain, sizeof plain, &r) == 0);
    memmove(s->in, s->in + r.consumed, s->in_len - r.consumed);
    s->in_len -= r.consumed;
    moved |= r.consumed > 0;
  }
  return moved;
}

static void tb_handshake(tb_side *c, tb_side *s, tb_keymat *key) {
  int i, a = 1, b = 1;
  NEED(tb_engine_begin(c->e) == 0);
  for (i = 0; i < 64 && (a || b || !(c->e->flags & TB_F_HS_DONE) || !(s->e->flags & TB_F_HS_DONE)); i++) {
    a = tb_step(c, s, key);
    b = tb_step(s, c, key);
  }
  NEED((c->e->flags & TB_F_HS_DONE) && (s->e->flags & TB_F_HS_DONE));
  NEED(c->in_len == 0 && s->in_len == 0);
}

/* A connection's whole handshake: both engines made, handshaken, freed. */
static void tb_connection(SSL_CTX *ctx, tb_keymat *key, tb_side *c, tb_side *s, int version) {
  c->e = tb_open(ctx, 1, version);
  s->e = tb_open(ctx, 0, version);
  c->in_len = s->in_len = 0;
  tb_handshake(c, s, key);
}

/* The server answers n bytes; the client reads them. */
static void tb_pair(void *arg, int counted) {
  pair_arg *p = arg;
  tb_result w, u;
  (void)counted;
  NEED(tb_engine_wrap(p->s, src, p->n, net, sizeof net, &w) == 0 && w.consumed == p->n);
  NEED(tb_engine_unwrap(p->c, net, w.produced, plain, sizeof plain, &u) == 0);
  NEED(u.consumed == w.produced && u.produced == p->n);
}

static void tb_regions(tb_keymat *key, const char *kind, int pairs) {
  static tb_side c, s;
  static const size_t SIZES[2] = {1024, TB_MAX_PLAINTEXT};
  char name[64];
  tb_error err;
  SSL_CTX *ctx = tb_ctx_new(&err);
  int i, k;
  NEED(ctx != NULL);
  for (i = 0; i < WARM; i++) {
    tb_connection(ctx, key, &c, &s, TLS1_3_VERSION);
    tb_engine_free(c.e);
    tb_engine_free(s.e);
  }
  snprintf(name, sizeof name, "tlsbridge handshake %s", kind);
  region_start();
  tb_connection(ctx, key, &c, &s, TLS1_3_VERSION);
  tb_engine_free(c.e);
  tb_engine_free(s.e);
  region_end(name);
  tb_connection(ctx, key, &c, &s, TLS1_3_VERSION);
  for (k = 0; k < 2 && pairs > 0; k++)
    pair_region("tlsbridge", tb_pair, c.e, s.e, SIZES[k], "", pairs);
  tb_engine_free(c.e);
  tb_engine_free(s.e);
  if (pairs > 0) { /* 1 KiB over TLS 1.2: its record format is OpenSSL's or the BIO's too */
    tb_connection(ctx, key, &c, &s, TLS1_2_VERSION);
    pair_region("tlsbridge", tb_pair, c.e, s.e, 1024, "t12 ", pairs);
    tb_engine_free(c.e);
    tb_engine_free(s.e);
  }
  tb_ctx_free(ctx);
}

/* ---- the floor: plain OpenSSL over a BIO pair ---- */

typedef struct ossl_conn {
  SSL *c, *s;
} ossl_conn;

SSL_CTX *ossl_ctx_v(EVP_PKEY *pk, X509 *x, int version) {
  SSL_CTX *ctx = SSL_CTX_new(TLS_method());
  NEED(ctx != NULL);
  NEED(SSL_CTX_set_min_proto_version(ctx, version) && SSL_CTX_set_max_proto_version(ctx, version));
  NEED(SSL_CTX_set_ciphersuites(ctx, SUITE) && SSL_CTX_set_cipher_list(ctx, SUITE12));
  if (pk) {
    NEED(SSL_CTX_use_certificate(ctx, x) == 1 && SSL_CTX_use_PrivateKey(ctx, pk) == 1);
  }
  return ctx;
}

static SSL_CTX *ossl_ctx(EVP_PKEY *pk, X509 *x) {
  return ossl_ctx_v(pk, x, TLS1_3_VERSION);
}

static void ossl_connection(SSL_CTX *cctx, SSL_CTX *sctx, ossl_conn *k) {
  BIO *bc, *bs;
  k->c = SSL_new(cctx);
  k->s = SSL_new(sctx);
  NEED(k->c && k->s && BIO_new_bio_pair(&bc, BIO_RING, &bs, BIO_RING));
  SSL_set_bio(k->c, bc, bc);
  SSL_set_bio(k->s, bs, bs);
  NEED(ssl_connect_pair(k->c, k->s));
}

static void ossl_free(ossl_conn *k) {
  SSL_free(k->c);
  SSL_free(k->s);
}

static void ossl_pair(void *arg, int counted) {
  pair_arg *p = arg;
  (void)counted;
  NEED(SSL_write(p->s, src, (int)p->n) == (int)p->n);
  NEED(SSL_read(p->c, plain, sizeof plain) == (int)p->n);
}

static void ossl_regions(EVP_PKEY *pk, X509 *x, const char *kind, int pairs) {
  static const size_t SIZES[2] = {1024, TB_MAX_PLAINTEXT};
  SSL_CTX *cctx = ossl_ctx(NULL, NULL), *sctx = ossl_ctx(pk, x);
  ossl_conn k;
  char name[64];
  int i, j;
  for (i = 0; i < WARM; i++) {
    ossl_connection(cctx, sctx, &k);
    ossl_free(&k);
  }
  snprintf(name, sizeof name, "openssl handshake %s", kind);
  region_start();
  ossl_connection(cctx, sctx, &k);
  ossl_free(&k);
  region_end(name);
  ossl_connection(cctx, sctx, &k);
  for (j = 0; j < 2 && pairs > 0; j++)
    pair_region("openssl", ossl_pair, k.c, k.s, SIZES[j], "", pairs);
  ossl_free(&k);
  if (pairs > 0) {
    SSL_CTX *c12 = ossl_ctx_v(NULL, NULL, TLS1_2_VERSION), *s12 = ossl_ctx_v(pk, x, TLS1_2_VERSION);
    ossl_connection(c12, s12, &k);
    pair_region("openssl", ossl_pair, k.c, k.s, 1024, "t12 ", pairs);
    ossl_free(&k);
    SSL_CTX_free(c12);
    SSL_CTX_free(s12);
  }
  SSL_CTX_free(cctx);
  SSL_CTX_free(sctx);
}

/* ---- resumed handshakes, RSA, both ends ---- */

#define RESUMED 8 /* resumed connections per region */

static const struct {
  const char *name;
  int version;
  long options; /* on every SSL_CTX of the run (the server's choice) */
} RESUME[3] = {{"resumed t13-ticket", TLS1_3_VERSION, 0},
               {"resumed t12-ticket", TLS1_2_VERSION, 0},
               {"resumed t12-id", TLS1_2_VERSION, SSL_OP_NO_TICKET}};

/* One connection as a JSSE client and server make it: the client names its
 * peer (its cache offers the session the previous connection left), both
 * handshake, both are freed. 1 when both ends resumed. */
static int tb_resumed(SSL_CTX *ctx, tb_keymat *key, int version) {
  static tb_side c, s;
  tb_error err;
  int reused;
  c.e = tb_engine_new(ctx, 1, &err);
  s.e = tb_engine_new(ctx, 0, &err);
  NEED(c.e && s.e);
  NEED(tb_configure(c.e->ssl, NULL, NULL, version, version, &err) == 0);
  NEED(tb_configure(s.e->ssl, NULL, NULL, version, version, &err) == 0);
  tb_engine_set_peer(c.e, "icount.test:443");
  c.in_len = s.in_len = 0;
  tb_handshake(&c, &s, key);
  reused = SSL_session_reused(c.e->ssl) && SSL_session_reused(s.e->ssl);
  tb_engine_free(c.e);
  tb_engine_free(s.e);
  return reused;
}

static void tb_resumed_regions(tb_keymat *key) {
  char name[64];
  tb_error err;
  int k, i, ok;
  for (k = 0; k < 3; k++) {
    SSL_CTX *ctx = tb_ctx_new(&err);
    NEED(ctx != NULL && tb_ctx_ciphers(ctx, SUITE12, SUITE, &err) == 0);
    SSL_CTX_set_options(ctx, RESUME[k].options);
    NEED(!tb_resumed(ctx, key, RESUME[k].version));
    for (i = 0; i < WARM; i++)
      NEED(tb_resumed(ctx, key, RESUME[k].version));
    snprintf(name, sizeof name, "tlsbridge %s x%d", RESUME[k].name, RESUMED);
    region_start();
    for (i = 0, ok = 1; i < RESUMED; i++)
      ok &= tb_resumed(ctx, key, RESUME[k].version);
    region_end(name);
    NEED(ok);
    tb_ctx_free(ctx);
  }
}

/* The floor: OpenSSL's defaults (its internal server cache, its own ticket
 * keys), the client keeping the last session it got. */
static int ossl_resumed(SSL_CTX *cctx, SSL_CTX *sctx, SSL_SESSION **sess) {
  ossl_conn k;
  BIO *bc, *bs;
  int reused;
  k.c = SSL_new(cctx);
  k.s = SSL_new(sctx);
  NEED(k.c && k.s && BIO_new_bio_pair(&bc, BIO_RING, &bs, BIO_RING));
  SSL_set_bio(k.c, bc, bc);
  SSL_set_bio(k.s, bs, bs);
  NEED(!*sess || SSL_set_session(k.c, *sess));
  NEED(ssl_connect_pair(k.c, k.s));
  reused = SSL_session_reused(k.c) && SSL_session_reused(k.s);
  SSL_SESSION_free(*sess);
  *sess = SSL_get1_session(k.c);
  /* as tlsbridge's engines are freed: no close_notify, the session stays
   * resumable (SSL_free would otherwise mark it spent) */
  SSL_set_shutdown(k.c, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
  SSL_set_shutdown(k.s, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
  ossl_free(&k);
  return reused;
}

static void ossl_resumed_regions(EVP_PKEY *pk, X509 *x) {
  char name[64];
  int k, i, ok;
  for (k = 0; k < 3; k++) {
    SSL_CTX *cctx = ossl_ctx_v(NULL, NULL, RESUME[k].version), *sctx = ossl_ctx_v(pk, x, RESUME[k].version);
    SSL_SESSION *sess = NULL;
    NEED(SSL_CTX_set_cipher_list(cctx, SUITE12) && SSL_CTX_set_cipher_list(sctx, SUITE12));
    SSL_CTX_set_options(cctx, RESUME[k].options);
    SSL_CTX_set_options(sctx, RESUME[k].options);
    NEED(!ossl_resumed(cctx, sctx, &sess));
    for (i = 0; i < WARM; i++)
      NEED(ossl_resumed(cctx, sctx, &sess));
    snprintf(name, sizeof name, "openssl %s x%d", RESUME[k].name, RESUMED);
    region_start();
    for (i = 0, ok = 1; i < RESUMED; i++)
      ok &= ossl_resumed(cctx, sctx, &sess);
    region_end(name);
    NEED(ok);
    SSL_SESSION_free(sess);
    SSL_CTX_free(cctx);
    SSL_CTX_free(sctx);
  }
}

/* The CPU features OpenSSL picks its code paths by, as this CPU (or
 * valgrind's emulated one) reports them: counts differ between paths. */
static void print_cpu(void) {
  static const struct {
    const char *name;
    unsigned leaf, reg, bit;
  } F[] = {{"aes", 1, 2, 25}, {"pclmul", 1, 2, 1}, {"avx", 1, 2, 28}, {"movbe", 1, 2, 22},
           {"avx2", 7, 1, 5}, {"bmi2", 7, 1, 8}, {"adx", 7, 1, 19}, {"sha", 7, 1, 29},
           {"avx512f", 7, 1, 16}, {"vaes", 7, 2, 9}, {"vpclmulqdq", 7, 2, 10}};
  unsigned r[2][4] = {{0}};
  size_t i;
  __get_cpuid(1, &r[0][0], &r[0][1], &r[0][2], &r[0][3]);
  __get_cpuid_count(7, 0, &r[1][0], &r[1][1], &r[1][2], &r[1][3]);
  printf("icount cpu:");
  for (i = 0; i < sizeof F / sizeof F[0]; i++)
    if (r[F[i].leaf == 1 ? 0 : 1][F[i].reg] >> F[i].bit & 1)
      printf(" %s", F[i].name);
  printf("\n");
}

int main(int argc, char **argv) {
  static const struct {
    const char *kind, *key, *cert;
  } KEYS[2] = {{"rsa", FZ_RSA_KEY, FZ_RSA_CERT}, {"ec", FZ_EC_KEY, FZ_EC_CERT}};
  int pairs = argc > 1 ? atoi(argv[1]) : 64, i;
  NEED(pairs > 0);
  NEED(fz_rand_install() == 0);
  for (i = 0; i < (int)sizeof src; i++)
    src[i] = (uint8_t)(i * 7 + 1);
  for (i = 0; i < 2; i++) {
    tb_keymat *key = keymat(KEYS[i].key, KEYS[i].cert);
    EVP_PKEY *pk = pem_key(KEYS[i].key);
    X509 *x = pem_cert(KEYS[i].cert);
    NEED(key && pk && x);
    /* the record layer does not depend on the key: pairs once */
    tb_regions(key, KEYS[i].kind, i == 0 ? pairs : 0);
    ossl_regions(pk, x, KEYS[i].kind, i == 0 ? pairs : 0);
    if (i == 0) {
      tb_resumed_regions(key);
      ossl_resumed_regions(pk, x);
    }
    tb_keymat_free(key);
    EVP_PKEY_free(pk);
    X509_free(x);
  }
  { /* last, RSA: their handshakes run on two threads, which draw the fixed
     * RAND's bytes in whatever order they are scheduled, and every region
     * after them would count with other keys and nonces */
    tb_keymat *key = keymat(KEYS[0].key, KEYS[0].cert);
    EVP_PKEY *pk = pem_key(KEYS[0].key);
    X509 *x = pem_cert(KEYS[0].cert);
    NEED(key && pk && x);
    socket_regions(key, pk, x, pairs);
    tb_keymat_free(key);
    EVP_PKEY_free(pk);
    X509_free(x);
  }
  print_cpu();
  printf("icount openssl: %s\n", OpenSSL_version(OPENSSL_VERSION));
  printf("icount ok: %d pairs per region\n", pairs);
  return 0;
}
