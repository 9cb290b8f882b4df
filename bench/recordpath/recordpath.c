/* What a kTLS-interface record path could save (issue 16 item 4), in
 * instructions under callgrind (bench/recordpath/run.sh builds it against
 * each OpenSSL and runs it). Per record, TLS 1.3 and 1.2 AES-128-GCM, 1 KiB
 * and 16 KiB, each region dumped under its own name:
 *   floor  SSL_write / SSL_read over a BIO pair (tests/icount's floor);
 *   mem    the same over the memory BIO below with kTLS declined (it
 *          moves ciphertext): the baseline of the ktls rows;
 *   evp    sealing / opening the same record with EVP directly: nonce from
 *          IV and sequence, AAD, inner content type, tag (the least a BIO
 *          that seals records itself must spend);
 *   ktls   SSL_write / SSL_read with SSL_OP_ENABLE_KTLS over a memory BIO
 *          that accepts OpenSSL's kTLS controls (BIO_CTRL_SET_KTLS,
 *          BIO_CTRL_GET_KTLS_SEND/RECV, the control-message type) and seals
 *          and opens the records itself with the evp code: what libssl's
 *          record path costs when the BIO owns the crypto. Only where
 *          libssl is built with kTLS (OPENSSL_NO_KTLS unset); the peer of
 *          a kTLS side is plain OpenSSL, so every record the BIO seals is
 *          checked by OpenSSL's own decryption. After the TLS 1.3 ktls
 *          regions it prints whether a KeyUpdate's keys reach the BIO.
 * Randomness is the fuzzers' fixed stream: counts repeat exactly.
 *
 *   recordpath [records]      records per region (default 64)
 *   recordpath time [rounds]  wall time per TLS 1.3 pair, mem against
 *                             ktls interleaved round by round (default 15;
 *                             not under callgrind) */
#include "fuzz_driver.h"
#include "fuzz_keys.h"
#include "ssl_connect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <openssl/pem.h>
#include <valgrind/callgrind.h>
#ifndef OPENSSL_NO_KTLS
#include <linux/tls.h>
#endif

#define WARM 4
#define MAXREC 16384
#define TAG 16
#define RING (1 << 21)

static uint8_t src[MAXREC], plain[MAXREC + 64];

#define NEED(c)                                                            \
  do {                                                                     \
    if (!(c)) {                                                            \
      fprintf(stderr, "recordpath: %s:%d: %s\n", __FILE__, __LINE__, #c);  \
      exit(2);                                                             \
    }                                                                      \
  } while (0)

static void region_start(void) { CALLGRIND_TOGGLE_COLLECT; }
static void region_pause(void) { CALLGRIND_TOGGLE_COLLECT; }
static void region_dump(const char *what, size_t n, int count) {
  char name[96];
  snprintf(name, sizeof name, "%s %zu x%d", what, n, count);
  CALLGRIND_DUMP_STATS_AT(name);
}

/* ---- one direction of record protection, AES-128-GCM, as a BIO would do it ---- */

typedef struct rec_key {
  EVP_CIPHER_CTX *ctx;
  uint8_t iv[12]; /* TLS 1.3: the static IV; TLS 1.2: salt, then the explicit part */
  uint64_t seq;
  int tls13;
} rec_key;

static void rec_key_init(rec_key *k, const uint8_t key[16], const uint8_t iv[12], uint64_t seq, int tls13,
                         int enc) {
  k->ctx = EVP_CIPHER_CTX_new();
  NEED(k->ctx && EVP_CipherInit_ex(k->ctx, EVP_aes_128_gcm(), NULL, key, NULL, enc) == 1);
  memcpy(k->iv, iv, 12);
  k->seq = seq;
  k->tls13 = tls13;
}

static void put64(uint8_t *p, uint64_t v) {
  int i;
  for (i = 7; i >= 0; i--, v >>= 8)
    p[i] = (uint8_t)v;
}

/* The nonce and AAD of record k->seq whose body (after any explicit nonce)
 * is body bytes long; returns the AAD length. */
static size_t rec_nonce_aad(const rec_key *k, uint8_t type, size_t body, uint8_t nonce[12], uint8_t aad[13]) {
  uint8_t s[8];
  int i;
  put64(s, k->seq);
  memcpy(nonce, k->iv, 12);
  if (k->tls13) {
    for (i = 0; i < 8; i++)
      nonce[4 + i] ^= s[i];
    aad[0] = 23, aad[1] = 3, aad[2] = 3, aad[3] = (uint8_t)(body >> 8), aad[4] = (uint8_t)body;
    return 5;
  }
  memcpy(nonce + 4, s, 8);
  memcpy(aad, s, 8);
  aad[8] = type, aad[9] = 3, aad[10] = 3, aad[11] = (uint8_t)((body - TAG) >> 8), aad[12] = (uint8_t)(body - TAG);
  return 13;
}

/* Seals n plaintext bytes of record type type from in straight into out
 * (header included); returns the record's length. */
static size_t rec_seal(rec_key *k, uint8_t type, const uint8_t *in, size_t n, uint8_t *out) {
  uint8_t nonce[12], aad[13];
  size_t body = k->tls13 ? n + 1 + TAG : 8 + n + TAG, al = rec_nonce_aad(k, type, k->tls13 ? body : n + TAG, nonce, aad);
  uint8_t *p = out + 5 + (k->tls13 ? 0 : 8);
  int l;
  out[0] = k->tls13 ? 23 : type, out[1] = 3, out[2] = 3, out[3] = (uint8_t)(body >> 8), out[4] = (uint8_t)body;
  if (!k->tls13)
    memcpy(out + 5, nonce + 4, 8);
  NEED(EVP_EncryptInit_ex(k->ctx, NULL, NULL, NULL, nonce) == 1);
  NEED(EVP_EncryptUpdate(k->ctx, NULL, &l, aad, (int)al) == 1);
  NEED(EVP_EncryptUpdate(k->ctx, p, &l, in, (int)n) == 1);
  if (k->tls13)
    NEED(EVP_EncryptUpdate(k->ctx, p + n, &l, &type, 1) == 1);
  NEED(EVP_EncryptFinal_ex(k->ctx, p, &l) == 1);
  NEED(EVP_CIPHER_CTX_ctrl(k->ctx, EVP_CTRL_AEAD_GET_TAG, TAG, out + 5 + body - TAG) == 1);
  k->seq++;
  return 5 + body;
}

/* Opens the whole record at in (len bytes) into out; returns the plaintext
 * length and its type, or -1 when it does not authenticate. */
static long rec_open(rec_key *k, const uint8_t *in, size_t len, uint8_t *out, uint8_t *type) {
  uint8_t nonce[12], aad[13];
  size_t body = len - 5, skip = k->tls13 ? 0 : 8, n = body - skip - TAG;
  int l;
  rec_nonce_aad(k, in[0], k->tls13 ? body : n + TAG, nonce, aad);
  if (!k->tls13)
    memcpy(nonce + 4, in + 5, 8);
  NEED(EVP_DecryptInit_ex(k->ctx, NULL, NULL, NULL, nonce) == 1);
  NEED(EVP_DecryptUpdate(k->ctx, NULL, &l, k->tls13 ? in : aad, k->tls13 ? 5 : 13) == 1);
  NEED(EVP_DecryptUpdate(k->ctx, out, &l, in + 5 + skip, (int)n) == 1);
  NEED(EVP_CIPHER_CTX_ctrl(k->ctx, EVP_CTRL_AEAD_SET_TAG, TAG, (void *)(in + len - TAG)) == 1);
  if (EVP_DecryptFinal_ex(k->ctx, out + n, &l) != 1)
    return -1;
  k->seq++;
  if (!k->tls13) {
    *type = in[0];
    return (long)n;
  }
  while (n > 0 && out[n - 1] == 0)
    n--;
  NEED(n > 0);
  *type = out[--n];
  return (long)n;
}

static void evp_regions(int tls13, int count) {
  static uint8_t rec[MAXREC + 64];
  static const size_t SIZES[2] = {1024, MAXREC};
  static const uint8_t key[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, iv[12] = {7};
  const char *v = tls13 ? "13" : "12";
  char what[32];
  rec_key s, o;
  uint8_t type;
  size_t len = 0;
  int i, j;
  rec_key_init(&s, key, iv, 0, tls13, 1);
  rec_key_init(&o, key, iv, 0, tls13, 0);
  for (j = 0; j < 2; j++) {
    for (i = 0; i < WARM; i++) {
      len = rec_seal(&s, 23, src, SIZES[j], rec);
      NEED(rec_open(&o, rec, len, plain, &type) == (long)SIZES[j] && type == 23);
    }
    NEED(memcmp(plain, src, SIZES[j]) == 0);
    for (i = 0; i < count; i++) {
      region_start();
      len = rec_seal(&s, 23, src, SIZES[j], rec);
      region_pause();
      NEED(rec_open(&o, rec, len, plain, &type) == (long)SIZES[j]);
      s.seq--, o.seq--; /* the same record each time, as the other regions send it */
    }
    snprintf(what, sizeof what, "evp%s seal", v);
    region_dump(what, SIZES[j], count);
    for (i = 0; i < count; i++) {
      region_start();
      NEED(rec_open(&o, rec, len, plain, &type) == (long)SIZES[j]);
      region_pause();
      o.seq--;
    }
    snprintf(what, sizeof what, "evp%s open", v);
    region_dump(what, SIZES[j], count);
  }
  EVP_CIPHER_CTX_free(s.ctx);
  EVP_CIPHER_CTX_free(o.ctx);
}

/* ---- a memory BIO, one per side, pointing at its peer: a write lands in the
 * peer's inbound buffer (the caller's destination), a read consumes this
 * side's. With OpenSSL's kTLS controls accepted it seals and opens records. ---- */

typedef struct kbio {
  struct kbio *peer;
  uint8_t *in;
  size_t in_off, in_len;
  int ktls; /* 0 plain; else accepts BIO_CTRL_SET_KTLS */
  int tx_on, rx_on, ctrl_type;
  rec_key tx, rx;
} kbio;

static int kbio_write(BIO *b, const char *data, int len) {
  kbio *k = BIO_get_data(b);
  kbio *p = k->peer;
  uint8_t *dst;
  if (p->in_off > 0 && p->in_off == p->in_len)
    p->in_off = p->in_len = 0;
  dst = p->in + p->in_len;
  NEED(p->in_len + (size_t)len + 64 <= RING);
  if (!k->tx_on) {
    memcpy(dst, data, (size_t)len);
    p->in_len += (size_t)len;
    return len;
  }
  NEED(len <= MAXREC);
  p->in_len += rec_seal(&k->tx, k->ctrl_type ? (uint8_t)k->ctrl_type : 23, (const uint8_t *)data, (size_t)len, dst);
  k->ctrl_type = 0;
  return len;
}

/* With kTLS receive on, OpenSSL expects what Linux's ktls_read_record gives:
 * one record per read, a plain header (type, TLS 1.2 version, plaintext
 * length) then the plaintext. */
static int kbio_read(BIO *b, char *out, int outl) {
  kbio *k = BIO_get_data(b);
  size_t avail = k->in_len - k->in_off, rl;
  const uint8_t *r = k->in + k->in_off;
  long n;
  uint8_t type;
  BIO_clear_retry_flags(b);
  if (avail == 0) {
    BIO_set_retry_read(b);
    return -1;
  }
  if (!k->rx_on) {
    if ((size_t)outl > avail)
      outl = (int)avail;
    memcpy(out, r, (size_t)outl);
    k->in_off += (size_t)outl;
    return outl;
  }
  NEED(avail >= 5);
  rl = 5 + ((size_t)r[3] << 8 | r[4]);
  NEED(avail >= rl && (size_t)outl >= rl);
  n = rec_open(&k->rx, r, rl, (uint8_t *)out + 5, &type);
  NEED(n >= 0);
  out[0] = (char)type, out[1] = 3, out[2] = 3, out[3] = (char)(n >> 8), out[4] = (char)n;
  k->in_off += rl;
  return (int)n + 5;
}

#ifndef OPENSSL_NO_KTLS
#define BIO_CTRL_SET_KTLS 72            /* internal/bio.h: not in the public headers */
#define BIO_CTRL_SET_KTLS_TX_SEND_CTRL_MSG 74
#define BIO_CTRL_CLEAR_KTLS_TX_CTRL_MSG 75

/* OpenSSL hands Linux's crypto_info (linux/tls.h) for a kernel socket. */
static long kbio_set_ktls(kbio *k, long tx, void *ptr) {
  const struct tls12_crypto_info_aes_gcm_128 *g = ptr;
  uint8_t iv[12];
  uint64_t seq = 0;
  int i, tls13 = g->info.version == TLS_1_3_VERSION;
  if (g->info.cipher_type != TLS_CIPHER_AES_GCM_128)
    return 0;
  memcpy(iv, g->salt, 4);
  memcpy(iv + 4, g->iv, 8);
  for (i = 0; i < 8; i++)
    seq = seq << 8 | g->rec_seq[i];
  EVP_CIPHER_CTX_free(tx ? k->tx.ctx : k->rx.ctx); /* a KeyUpdate re-keys */
  rec_key_init(tx ? &k->tx : &k->rx, g->key, iv, seq, tls13, tx != 0);
  if (tx)
    k->tx_on = 1;
  else
    k->rx_on = 1;
  return 1;
}
#endif

static long kbio_ctrl(BIO *b, int cmd, long num, void *ptr) {
  kbio *k = BIO_get_data(b);
  switch (cmd) {
  case BIO_CTRL_FLUSH:
    return 1;
  case BIO_CTRL_PENDING:
    return (long)(k->in_len - k->in_off);
  case BIO_CTRL_WPENDING:
    return 0;
#ifndef OPENSSL_NO_KTLS
  case BIO_CTRL_SET_KTLS:
    return k->ktls ? kbio_set_ktls(k, num, ptr) : 0;
  case BIO_CTRL_GET_KTLS_SEND:
    return k->tx_on;
  case BIO_CTRL_GET_KTLS_RECV:
    return k->rx_on;
  case BIO_CTRL_SET_KTLS_TX_SEND_CTRL_MSG:
    k->ctrl_type = (int)num;
    return 1;
  case BIO_CTRL_CLEAR_KTLS_TX_CTRL_MSG:
    k->ctrl_type = 0;
    return 1;
#endif
  default:
    return 0;
  }
}

static BIO_METHOD *kbio_method(void) {
  static BIO_METHOD *m;
  if (!m) {
    m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "recordpath");
    NEED(m && BIO_meth_set_write(m, kbio_write) && BIO_meth_set_read(m, kbio_read) &&
         BIO_meth_set_ctrl(m, kbio_ctrl));
  }
  return m;
}

/* ---- connections: server and client, TLS 1.3 or 1.2, AES-128-GCM ---- */

typedef struct conn {
  SSL *c, *s;
  kbio kc, ks;
  BIO *bc, *bs;
} conn;

static SSL_CTX *ctx_new(int tls13, EVP_PKEY *pk, X509 *x, int ktls) {
  SSL_CTX *ctx = SSL_CTX_new(TLS_method());
  int v = tls13 ? TLS1_3_VERSION : TLS1_2_VERSION;
  NEED(ctx && SSL_CTX_set_min_proto_version(ctx, v) && SSL_CTX_set_max_proto_version(ctx, v));
  NEED(tls13 ? SSL_CTX_set_ciphersuites(ctx, "TLS_AES_128_GCM_SHA256")
             : SSL_CTX_set_cipher_list(ctx, "ECDHE-ECDSA-AES128-GCM-SHA256"));
  if (ktls)
    SSL_CTX_set_options(ctx, SSL_OP_ENABLE_KTLS);
  if (pk)
    NEED(SSL_CTX_use_certificate(ctx, x) == 1 && SSL_CTX_use_PrivateKey(ctx, pk) == 1);
  return ctx;
}

static BIO *kbio_new(kbio *k, kbio *peer, int ktls) {
  BIO *b = BIO_new(kbio_method());
  memset(k, 0, sizeof *k);
  k->peer = peer;
  k->ktls = ktls;
  NEED(b && (k->in = malloc(RING)) != NULL);
  BIO_set_data(b, k);
  BIO_set_init(b, 1);
  return b;
}

enum { VIA_PAIR, VIA_MEM, VIA_KTLS };
static const char *const VIA[3] = {"floor", "mem", "ktls"};

/* VIA_PAIR: OpenSSL's BIO pair, as tests/icount; VIA_MEM: kbio declining
 * kTLS; VIA_KTLS: kbio taking the kTLS controls on both sides. */
static void conn_open(conn *k, SSL_CTX *cctx, SSL_CTX *sctx, int via) {
  k->c = SSL_new(cctx);
  k->s = SSL_new(sctx);
  NEED(k->c && k->s);
  if (via != VIA_PAIR) {
    k->bc = kbio_new(&k->kc, &k->ks, via == VIA_KTLS);
    k->bs = kbio_new(&k->ks, &k->kc, via == VIA_KTLS);
  } else {
    NEED(BIO_new_bio_pair(&k->bc, RING, &k->bs, RING));
  }
  SSL_set_bio(k->c, k->bc, k->bc);
  SSL_set_bio(k->s, k->bs, k->bs);
  NEED(ssl_connect_pair(k->c, k->s));
}

static void conn_free(conn *k) {
  SSL_free(k->c);
  SSL_free(k->s);
  if (k->kc.in) {
    EVP_CIPHER_CTX_free(k->kc.tx.ctx);
    EVP_CIPHER_CTX_free(k->kc.rx.ctx);
    EVP_CIPHER_CTX_free(k->ks.tx.ctx);
    EVP_CIPHER_CTX_free(k->ks.rx.ctx);
    free(k->kc.in);
    free(k->ks.in);
  }
}

/* count records server to client: the writes in one region, the reads in
 * the next (the BIO holds them all in between). */
static void ssl_regions(const char *what, conn *k, int count) {
  static const size_t SIZES[2] = {1024, MAXREC};
  char name[48];
  int i, j;
  for (j = 0; j < 2; j++) {
    for (i = 0; i < WARM; i++) {
      NEED(SSL_write(k->s, src, (int)SIZES[j]) == (int)SIZES[j]);
      NEED(SSL_read(k->c, plain, sizeof plain) == (int)SIZES[j]);
    }
    NEED(memcmp(plain, src, SIZES[j]) == 0);
    region_start();
    for (i = 0; i < count; i++)
      NEED(SSL_write(k->s, src, (int)SIZES[j]) == (int)SIZES[j]);
    region_pause();
    snprintf(name, sizeof name, "%s write", what);
    region_dump(name, SIZES[j], count);
    region_start();
    for (i = 0; i < count; i++)
      NEED(SSL_read(k->c, plain, sizeof plain) == (int)SIZES[j]);
    region_pause();
    snprintf(name, sizeof name, "%s read", what);
    region_dump(name, SIZES[j], count);
    NEED(memcmp(plain, src, SIZES[j]) == 0);
  }
}

/* Whether OpenSSL hands the BIO the keys of a KeyUpdate: the server
 * updates its sending key, then the client must read what it sends next. */
static void key_update(conn *k) {
  int r;
  unsigned long e;
  NEED(SSL_key_update(k->s, SSL_KEY_UPDATE_NOT_REQUESTED) == 1);
  NEED(SSL_write(k->s, src, 100) == 100);
  r = SSL_read(k->c, plain, sizeof plain);
  e = ERR_peek_error();
  printf("recordpath ktls13 after a KeyUpdate: %s%s\n", r == 100 && memcmp(plain, src, 100) == 0 ? "the peer reads the next record" : "the peer fails: ",
         r == 100 ? "" : e ? ERR_reason_error_string(e) : "no OpenSSL error");
  ERR_clear_error();
}

static void ssl_pass(int tls13, int via, EVP_PKEY *pk, X509 *x, int count) {
  int ktls = via == VIA_KTLS;
  SSL_CTX *cctx = ctx_new(tls13, NULL, NULL, ktls), *sctx = ctx_new(tls13, pk, x, ktls);
  conn k;
  char what[32];
  memset(&k, 0, sizeof k);
  conn_open(&k, cctx, sctx, via);
  if (ktls)
    printf("recordpath ktls%s: server send %s receive %s, client send %s receive %s\n", tls13 ? "13" : "12",
           k.ks.tx_on ? "on" : "off", k.ks.rx_on ? "on" : "off", k.kc.tx_on ? "on" : "off",
           k.kc.rx_on ? "on" : "off");
  snprintf(what, sizeof what, "%s%s", VIA[via], tls13 ? "13" : "12");
  ssl_regions(what, &k, count);
  if (ktls && tls13)
    key_update(&k);
  conn_free(&k);
  SSL_CTX_free(cctx);
  SSL_CTX_free(sctx);
}

#ifndef OPENSSL_NO_KTLS
static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Wall time per TLS 1.3 pair, 1 KiB and 16 KiB: each round times the mem
 * connection then the ktls one, so load from other processes falls on both. */
static void time_pairs(EVP_PKEY *pk, X509 *x, int rounds) {
  enum { MAXROUNDS = 99 };
  static const size_t SIZES[2] = {1024, MAXREC};
  static double t[2][MAXROUNDS];
  SSL_CTX *cctx[2], *sctx[2];
  conn k[2];
  int v, r, i, j, n;
  double a;
  NEED(rounds > 0 && rounds <= MAXROUNDS);
  for (v = 0; v < 2; v++) {
    memset(&k[v], 0, sizeof k[v]);
    cctx[v] = ctx_new(1, NULL, NULL, v);
    sctx[v] = ctx_new(1, pk, x, v);
    conn_open(&k[v], cctx[v], sctx[v], v ? VIA_KTLS : VIA_MEM);
  }
  for (j = 0; j < 2; j++) {
    n = j ? 2000 : 20000;
    for (r = 0; r < rounds; r++)
      for (v = 0; v < 2; v++) {
        a = now_ns();
        for (i = 0; i < n; i++) {
          NEED(SSL_write(k[v].s, src, (int)SIZES[j]) == (int)SIZES[j]);
          NEED(SSL_read(k[v].c, plain, sizeof plain) == (int)SIZES[j]);
        }
        t[v][r] = (now_ns() - a) / n;
      }
    for (v = 0; v < 2; v++) {
      qsort(t[v], (size_t)rounds, sizeof t[v][0], cmp_double);
      printf("recordpath time %s13 %zu pair ns: min %.0f median %.0f max %.0f (%d rounds)\n", v ? "ktls" : "mem",
             SIZES[j], t[v][0], t[v][rounds / 2], t[v][rounds - 1], rounds);
    }
  }
  for (v = 0; v < 2; v++) {
    conn_free(&k[v]);
    SSL_CTX_free(cctx[v]);
    SSL_CTX_free(sctx[v]);
  }
}
#endif

int main(int argc, char **argv) {
  int timing = argc > 1 && strcmp(argv[1], "time") == 0;
  int count = argc > 1 + timing ? atoi(argv[1 + timing]) : timing ? 15 : 64, i, tls13;
  BIO *b;
  EVP_PKEY *pk;
  X509 *x;
  NEED(count > 0);
  NEED(fz_rand_install() == 0);
  for (i = 0; i < (int)sizeof src; i++)
    src[i] = (uint8_t)(i * 7 + 1);
  b = BIO_new_mem_buf(FZ_EC_KEY, -1);
  pk = PEM_read_bio_PrivateKey(b, NULL, NULL, NULL);
  BIO_free(b);
  b = BIO_new_mem_buf(FZ_EC_CERT, -1);
  x = PEM_read_bio_X509(b, NULL, NULL, NULL);
  BIO_free(b);
  NEED(pk && x);
#ifndef OPENSSL_NO_KTLS
  if (timing)
    time_pairs(pk, x, count);
#endif
  for (tls13 = 1; tls13 >= 0 && !timing; tls13--) {
    evp_regions(tls13, count);
    ssl_pass(tls13, VIA_PAIR, pk, x, count);
    ssl_pass(tls13, VIA_MEM, pk, x, count);
#ifndef OPENSSL_NO_KTLS
    ssl_pass(tls13, VIA_KTLS, pk, x, count);
#endif
  }
#ifdef OPENSSL_NO_KTLS
  printf("recordpath ktls: not built (OPENSSL_NO_KTLS: this libssl has no kTLS record path)\n");
#endif
  EVP_PKEY_free(pk);
  X509_free(x);
  printf("recordpath openssl: %s\n", OpenSSL_version(OPENSSL_VERSION));
  printf("recordpath ok: %d %s\n", count, timing ? "rounds" : "records per region");
  return 0;
}
