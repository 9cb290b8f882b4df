/* Seed corpus from real handshakes: a client and a server engine talk in
 * memory through the fuzz driver, and each side's ops (peer bytes as they
 * arrived, plus its own actions) are written as one seed. Because both the
 * randomness and the keys are fixed, replaying a seed under the fuzzer
 * reproduces the session byte for byte, so mutations start from deep states
 * (app data, KeyUpdate, close_notify) instead of a failed Finished.
 *   gen_corpus DIR   writes DIR/fuzz_server, DIR/fuzz_client, DIR/fuzz_pem */
#include "fuzz_driver.h"
#include "fuzz_keys.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <openssl/pem.h>

typedef struct rec {
  uint8_t *p;
  size_t n, cap;
} rec;

typedef struct party {
  fz_side s;
  rec r;
} party;

enum { KEYUPDATE = 1, SPLIT = 2, SMALLBUF = 4, PHA = 8, SERVER_CLOSES = 16 };

static const char *dir;
static int failures;

static void put(rec *r, const void *p, size_t n) {
  if (r->n + n > r->cap) {
    r->cap = (r->n + n) * 2 + 64;
    r->p = realloc(r->p, r->cap);
    if (!r->p)
      abort();
  }
  memcpy(r->p + r->n, p, n);
  r->n += n;
}

static void act(party *p, int b) {
  uint8_t op = (uint8_t)b;
  put(&p->r, &op, 1);
  fz_op(&p->s, b, NULL, 0);
}

/* Everything `from` wrote goes to `to`, whole or in small pieces. */
static void deliver(party *from, party *to, int flags) {
  size_t off = 0, n = from->s.out_len;
  uint8_t *bytes = from->s.out;
  from->s.out = NULL;
  from->s.out_len = from->s.out_cap = 0;
  while (off < n) {
    size_t k = n - off > 60000 ? 60000 : n - off;
    uint8_t op[3];
    if (flags & SPLIT && k > 211)
      k = 211;
    op[0] = flags & SMALLBUF ? (2 << 3 | 2 << 5) : 0;
    op[1] = (uint8_t)(k >> 8);
    op[2] = (uint8_t)k;
    put(&to->r, op, 3);
    put(&to->r, bytes + off, k);
    fz_op(&to->s, op[0], bytes + off, k);
    off += k;
  }
  free(bytes);
}

static void exchange(party *c, party *s, int flags) {
  int i;
  for (i = 0; i < 32 && (c->s.out_len || s->s.out_len); i++) {
    deliver(c, s, flags);
    deliver(s, c, flags);
  }
}

static void save(const char *target, const char *name, const rec *r) {
  char path[512];
  FILE *f;
  snprintf(path, sizeof path, "%s/%s", dir, target);
  if (mkdir(path, 0755) != 0 && errno != EEXIST)
    abort();
  snprintf(path, sizeof path, "%s/%s/%s", dir, target, name);
  f = fopen(path, "wb");
  if (!f || fwrite(r->p, 1, r->n, f) != r->n || fclose(f) != 0) {
    fprintf(stderr, "cannot write %s\n", path);
    exit(1);
  }
}

static void session(const char *name, int cfg, int flags) {
  party c, s;
  uint8_t b = (uint8_t)cfg;
  int ok_c, ok_s, want = !(cfg & FZ_CFG_REJECT);
  memset(&c, 0, sizeof c);
  memset(&s, 0, sizeof s);
  fz_rand_reset();
  if (fz_open(&c.s, 1, cfg) != 0 || fz_open(&s.s, 0, cfg) != 0)
    abort();
  c.s.capture = s.s.capture = 1;
  put(&c.r, &b, 1);
  put(&s.r, &b, 1);
  fz_start(&c.s);
  exchange(&c, &s, flags);
  act(&c, 2 | 3 << 3);
  exchange(&c, &s, flags);
  act(&s, 2 | 26 << 3); /* 16767 bytes: a full record and a short one */
  exchange(&c, &s, flags);
  if (flags & KEYUPDATE) {
    act(&c, 5);
    exchange(&c, &s, flags);
    act(&s, 5);
    exchange(&c, &s, flags);
  }
  if (flags & PHA) {
    act(&s, 6); /* certificate wanted, not required */
    exchange(&c, &s, flags);
  }
  act(&c, 2 | 1 << 3);
  exchange(&c, &s, flags);
  act(flags & SERVER_CLOSES ? &s : &c, 3);
  exchange(&c, &s, flags);
  fz_close(&c.s);
  fz_close(&s.s);
  /* the seeds must replay to the same end, or the fuzzer starts shallow */
  ok_c = fz_run(1, c.r.p, c.r.n);
  ok_s = fz_run(0, s.r.p, s.r.n);
  printf("%-24s client %5zu bytes %s, server %5zu bytes %s\n", name, c.r.n, ok_c ? "ok" : "FAILED", s.r.n,
         ok_s ? "ok" : "FAILED");
  if (ok_c != want || (ok_s != want && want))
    failures++;
  save("fuzz_client", name, &c.r);
  save("fuzz_server", name, &s.r);
  free(c.r.p);
  free(s.r.p);
}

static void pem_seed(const char *name, int pwbyte, const char *pw, const char *key, const char *cert) {
  rec r = {0};
  uint8_t b = (uint8_t)pwbyte;
  put(&r, &b, 1);
  if (pw)
    put(&r, pw, strlen(pw));
  put(&r, key, strlen(key));
  if (cert)
    put(&r, cert, strlen(cert));
  save("fuzz_pem", name, &r);
  free(r.p);
}

/* The EC key again, encrypted as PKCS#8 (PBES2) or legacy PEM (DEK-Info). */
static char *encrypted(int legacy) {
  BIO *in = BIO_new_mem_buf(FZ_EC_KEY, -1), *out = BIO_new(BIO_s_mem());
  EVP_PKEY *pk = PEM_read_bio_PrivateKey(in, NULL, NULL, NULL);
  char *p, *copy;
  long n;
  if (!pk || !(legacy ? PEM_write_bio_PrivateKey_traditional(out, pk, EVP_aes_128_cbc(), NULL, 0, NULL, "secret")
                      : PEM_write_bio_PKCS8PrivateKey(out, pk, EVP_aes_128_cbc(), NULL, 0, NULL, "secret")))
    abort();
  n = BIO_get_mem_data(out, &p);
  copy = calloc(1, (size_t)n + 1);
  memcpy(copy, p, (size_t)n);
  EVP_PKEY_free(pk);
  BIO_free(in);
  BIO_free(out);
  return copy;
}

int main(int argc, char **argv) {
  char *enc8, *encl;
  if (argc != 2 || fz_init() != 0) {
    fprintf(stderr, "usage: gen_corpus DIR\n");
    return 2;
  }
  dir = argv[1];
  session("tls13-aes128", 2, 0);
  session("tls13-keyupdate", 2, KEYUPDATE);
  session("tls13-chacha-split", 3, SPLIT);
  session("tls13-smallbuf", 2, SMALLBUF | SERVER_CLOSES);
  session("tls13-clientauth", 2 | FZ_CFG_CLIENT_AUTH, 0);
  session("tls13-pha", 2, PHA);
  session("tls13-hello-alpn", 2 | FZ_CFG_HELLO_TASK | FZ_CFG_ALPN, 0);
  session("tls13-reject", 2 | FZ_CFG_REJECT, 0);
  session("tls12-gcm", 1, 0);
  session("tls12-split-smallbuf", 1, SPLIT | SMALLBUF);
  session("tls12-clientauth", 1 | FZ_CFG_CLIENT_AUTH, SERVER_CLOSES);
  session("tls12-alpn", 1 | FZ_CFG_ALPN, 0);
  pem_seed("ec-key-cert", 0x3f, NULL, FZ_EC_KEY, FZ_EC_CERT);
  pem_seed("rsa-key-cert", 0x3f, NULL, FZ_RSA_KEY, FZ_RSA_CERT);
  enc8 = encrypted(0);
  encl = encrypted(1);
  pem_seed("ec-pkcs8-encrypted", 6, "secret", enc8, FZ_EC_CERT);
  pem_seed("ec-legacy-encrypted", 6, "secret", encl, FZ_EC_CERT);
  pem_seed("ec-encrypted-nopass", 0x3f, NULL, enc8, NULL);
  free(enc8);
  free(encl);
  return failures ? 1 : 0;
}
