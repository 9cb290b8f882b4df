/* What a kTLS-interface record path could save (issue 16 item 4), in
 * instructions under callgrind (bench/recordpath/run.sh builds it against
 * each OpenSSL and runs it). Per record, TLS 1.3 and 1.2 AES-128-GCM, 1 KiB
 * and 16 KiB, each region dumped under its own name:
 *   floor  SSL_write / SSL_read over a BIO pair (tests/icount's floor);
 *   mem    the same over the memory BIO of recordpath_bio.c with kTLS
 *          declined (it moves ciphertext): the baseline of the ktls rows;
 *   evp    sealing / opening the same record with EVP directly: nonce from
 *          IV and sequence, AAD, inner content type, tag (the least a BIO
 *          that seals records itself must spend);
 *   ktls   SSL_write / SSL_read with SSL_OP_ENABLE_KTLS over a memory BIO
 *          that accepts OpenSSL's kTLS controls (BIO_CTRL_SET_KTLS,
 *          BIO_CTRL_GET_KTLS_SEND/RECV, the control-message type) and seals
 *          and opens the records itself with the evp code: what libssl's
 *          record path costs when the BIO owns the crypto, on both
 *          sides. Only where libssl is built with kTLS (OPENSSL_NO_KTLS
 *          unset). After the TLS 1.3 ktls regions it prints whether a
 *          KeyUpdate's keys reach the BIO.
 * Then, where libssl has kTLS, each side in turn takes the kTLS controls
 * against a plain OpenSSL peer, so the BIO's records are checked by
 * OpenSSL's own code in both directions (peer_check), and it reports what
 * libssl sends when a refused write is retried from a moved buffer
 * (retry_check).
 * Randomness is the fuzzers' fixed stream: counts repeat exactly.
 *
 *   recordpath [records]      records per region (default 64)
 *   recordpath time [rounds]  wall time per TLS 1.3 pair, mem against
 *                             ktls interleaved round by round, order
 *                             alternating (default 15; not under callgrind) */
#include "fuzz_driver.h"
#include "fuzz_keys.h"
#include "recordpath_bio.h"
#include "ssl_connect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <openssl/pem.h>
#include <valgrind/callgrind.h>

#define WARM 4

static uint8_t src[MAXREC], plain[MAXREC + 64];

static void region_start(void) { CALLGRIND_TOGGLE_COLLECT; }
static void region_pause(void) { CALLGRIND_TOGGLE_COLLECT; }
static void region_dump(const char *what, size_t n, int count) {
  char name[96];
  snprintf(name, sizeof name, "%s %zu x%d", what, n, count);
  CALLGRIND_DUMP_STATS_AT(name);
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

enum { VIA_PAIR, VIA_MEM, VIA_KTLS, VIA_KTLS_SERVER, VIA_KTLS_CLIENT };
static const char *const VIA[3] = {"floor", "mem", "ktls"};

/* VIA_PAIR: OpenSSL's BIO pair, as tests/icount; VIA_MEM: kbio declining
 * kTLS; VIA_KTLS: kbio taking the kTLS controls on both sides;
 * VIA_KTLS_SERVER / _CLIENT: on that side only, the peer plain OpenSSL. */
static void conn_open(conn *k, SSL_CTX *cctx, SSL_CTX *sctx, int via) {
  k->c = SSL_new(cctx);
  k->s = SSL_new(sctx);
  NEED(k->c && k->s);
  if (via != VIA_PAIR) {
    k->bc = kbio_new(&k->kc, &k->ks, via == VIA_KTLS || via == VIA_KTLS_CLIENT);
    k->bs = kbio_new(&k->ks, &k->kc, via == VIA_KTLS || via == VIA_KTLS_SERVER);
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
    kbio_free(&k->kc);
    kbio_free(&k->ks);
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
static int exchange(SSL *from, SSL *to, size_t n) {
  return SSL_write(from, src, (int)n) == (int)n && SSL_read(to, plain, sizeof plain) == (int)n &&
         memcmp(plain, src, n) == 0;
}

/* Whether a plain OpenSSL peer accepts what the kTLS side's BIO seals and
 * the BIO opens what the peer seals: data both ways, TLS 1.3 KeyUpdates
 * from each side (re-keying the BIO's receive, then its send), then
 * close_notify each way. Prints the first step that fails. */
static void peer_check(int tls13, int server, EVP_PKEY *pk, X509 *x) {
  static const size_t SIZES[3] = {1, 1024, MAXREC};
  SSL_CTX *cctx = ctx_new(tls13, NULL, NULL, !server), *sctx = ctx_new(tls13, pk, x, server);
  conn k;
  SSL *kt, *pl;
  kbio *kb;
  const char *step = NULL;
  unsigned long e;
  int i;
  memset(&k, 0, sizeof k);
  conn_open(&k, cctx, sctx, server ? VIA_KTLS_SERVER : VIA_KTLS_CLIENT);
  kt = server ? k.s : k.c, pl = server ? k.c : k.s, kb = server ? &k.ks : &k.kc;
  for (i = 0; i < 3 && !step; i++)
    if (!exchange(kt, pl, SIZES[i]) || !exchange(pl, kt, SIZES[i]))
      step = "data";
  if (!step && tls13 &&
      (SSL_key_update(pl, SSL_KEY_UPDATE_NOT_REQUESTED) != 1 || !exchange(pl, kt, 1024) || !exchange(kt, pl, 1024)))
    step = "the peer's KeyUpdate";
  if (!step && tls13 &&
      (SSL_key_update(kt, SSL_KEY_UPDATE_NOT_REQUESTED) != 1 || !exchange(kt, pl, 1024) || !exchange(pl, kt, 1024)))
    step = "the kTLS side's KeyUpdate";
  if (!step && (SSL_shutdown(kt) != 0 || SSL_read(pl, plain, sizeof plain) != 0 ||
                SSL_get_error(pl, 0) != SSL_ERROR_ZERO_RETURN))
    step = "the kTLS side's close_notify";
  if (!step && (SSL_shutdown(pl) != 1 || SSL_read(kt, plain, sizeof plain) != 0 ||
                SSL_get_error(kt, 0) != SSL_ERROR_ZERO_RETURN))
    step = "the peer's close_notify";
  e = ERR_peek_error();
  printf("recordpath check %s, kTLS %s (send %s, receive %s) against plain OpenSSL: ", tls13 ? "TLS 1.3" : "TLS 1.2",
         server ? "server" : "client", kb->tx_on ? "on" : "off", kb->rx_on ? "on" : "off");
  if (step)
    printf("FAILS at %s (%s)\n", step, e ? ERR_reason_error_string(e) : "no OpenSSL error");
  else
    printf("ok: data both ways%s, close_notify both ways\n", tls13 ? ", a KeyUpdate from each side" : "");
  ERR_clear_error();
  conn_free(&k);
  SSL_CTX_free(cctx);
  SSL_CTX_free(sctx);
}

/* Whether a write the BIO refused (retry) is finished from the buffer the
 * caller passes again or from the one it passed first: tlsbridge sets
 * SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER and releases a pinned heap array
 * between calls, and with kTLS sending libssl writes from the caller's
 * buffer instead of its own record buffer. */
static void retry_check(EVP_PKEY *pk, X509 *x) {
  SSL_CTX *cctx = ctx_new(1, NULL, NULL, 0), *sctx = ctx_new(1, pk, x, 1);
  uint8_t *first = malloc(1024), *again = malloc(1024);
  conn k;
  int r;
  NEED(first && again);
  /* on the context, as tlsbridge does: a record layer takes the mode when it is made */
  SSL_CTX_set_mode(sctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_ENABLE_PARTIAL_WRITE);
  memset(&k, 0, sizeof k);
  conn_open(&k, cctx, sctx, VIA_KTLS_SERVER);
  memcpy(first, src, 1024);
  memcpy(again, src, 1024);
  k.ks.refuse = 1;
  r = SSL_write(k.s, first, 1024);
  NEED(r <= 0 && SSL_get_error(k.s, r) == SSL_ERROR_WANT_WRITE);
  memset(first, 0xee, 1024); /* what a released array may hold by then */
  NEED(SSL_write(k.s, again, 1024) == 1024);
  r = SSL_read(k.c, plain, sizeof plain);
  printf("recordpath check a refused kTLS write retried with a moved buffer: %s\n",
         r == 1024 && memcmp(plain, src, 1024) == 0 ? "the peer reads the data"
         : r == 1024 && plain[0] == 0xee            ? "the peer reads the FIRST buffer's bytes (libssl kept the pointer)"
                                                    : "the peer fails");
  ERR_clear_error();
  free(first);
  free(again);
  conn_free(&k);
  SSL_CTX_free(cctx);
  SSL_CTX_free(sctx);
}

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
 * connection and the ktls one, the order alternating round by round, so
 * load from other processes falls on both; the per-round ratio ktls / mem
 * is the verdict (a spread straddling 1.00 is noise). */
static void time_pairs(EVP_PKEY *pk, X509 *x, int rounds) {
  enum { MAXROUNDS = 99 };
  static const size_t SIZES[2] = {1024, MAXREC};
  static double t[3][MAXROUNDS];
  static const char *const NAMES[3] = {"mem13", "ktls13", "ratio ktls13/mem13"};
  SSL_CTX *cctx[2], *sctx[2];
  conn k[2];
  int v, o, r, i, j, n;
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
    for (r = 0; r < rounds; r++) {
      for (o = 0; o < 2; o++) {
        v = o ^ (r & 1);
        a = now_ns();
        for (i = 0; i < n; i++) {
          NEED(SSL_write(k[v].s, src, (int)SIZES[j]) == (int)SIZES[j]);
          NEED(SSL_read(k[v].c, plain, sizeof plain) == (int)SIZES[j]);
        }
        t[v][r] = (now_ns() - a) / n;
      }
      t[2][r] = t[1][r] / t[0][r];
    }
    for (v = 0; v < 3; v++) {
      qsort(t[v], (size_t)rounds, sizeof t[v][0], cmp_double);
      printf(v < 2 ? "recordpath time %s %zu pair ns: min %.0f median %.0f max %.0f (%d rounds)\n"
                   : "recordpath time %s %zu: min %.3f median %.3f max %.3f (%d rounds)\n",
             NAMES[v], SIZES[j], t[v][0], t[v][rounds / 2], t[v][rounds - 1], rounds);
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
    peer_check(tls13, 1, pk, x);
    peer_check(tls13, 0, pk, x);
#endif
  }
#ifndef OPENSSL_NO_KTLS
  if (!timing)
    retry_check(pk, x);
#endif
#ifdef OPENSSL_NO_KTLS
  printf("recordpath ktls: not built (OPENSSL_NO_KTLS: this libssl has no kTLS record path)\n");
#endif
  EVP_PKEY_free(pk);
  X509_free(x);
  printf("recordpath openssl: %s\n", OpenSSL_version(OPENSSL_VERSION));
  printf("recordpath ok: %d %s\n", count, timing ? "rounds" : "records per region");
  return 0;
}
