/* PEM files and OpenSSL cipher strings as the Tomcat integration hands them
 * to OpenSSL (pem.c, cipher_spec.c, a host's list held by its context in
 * ciphers.c): good input, wrong passwords, missing
 * and damaged files, strings that select nothing. Run under ASan in CI. */
#include "test_support.h"
#include "pem.h"
#include "cipher_spec.h"
#include "ciphers.h"
#include "live.h"

#include <string.h>
#include <unistd.h>
#include <openssl/pem.h>


static char dir[] = "/tmp/tb-test-config-XXXXXX";

static void path(char *out, size_t n, const char *name) {
  snprintf(out, n, "%s/%s", dir, name);
}

static void write_files(tb_keymat *k) {
  char p[256];
  BIO *b;
  path(p, sizeof p, "enc.key");
  b = BIO_new_file(p, "w");
  CHECK(b && PEM_write_bio_PKCS8PrivateKey(b, k->key, EVP_aes_256_cbc(), NULL, 0, NULL, (void *)"s3cret"));
  BIO_free(b);
  path(p, sizeof p, "both.pem"); /* certificate, then an unencrypted key: Tomcat's single-file form */
  b = BIO_new_file(p, "w");
  CHECK(b && PEM_write_bio_X509(b, k->cert) && PEM_write_bio_X509(b, k->cert) &&
        PEM_write_bio_PrivateKey(b, k->key, NULL, NULL, 0, NULL, NULL));
  BIO_free(b);
  path(p, sizeof p, "damaged.pem");
  b = BIO_new_file(p, "w");
  CHECK(b && PEM_write_bio_X509(b, k->cert));
  CHECK(BIO_puts(b, "-----BEGIN CERTIFICATE-----\nnot base64 at all!\n-----END CERTIFICATE-----\n") > 0);
  BIO_free(b);
}

/* needle occurs exactly once in hay */
static int once(const char *hay, const char *needle) {
  const char *at = strstr(hay, needle);
  if (!at || strstr(at + 1, needle)) {
    fprintf(stderr, "want [%s] once in: %s\n", needle, hay);
    return 0;
  }
  return 1;
}

static void test_keys(tb_keymat *k) {
  char p[256];
  tb_error err;
  uint8_t *der = NULL;
  size_t len = 0;

  path(p, sizeof p, "enc.key");
  CHECK(tb_pem_read_key(p, "s3cret", NULL, &der, &len, &err) == 0);
  CHECK(der && len > 0);
  {
    const unsigned char *q = der;
    PKCS8_PRIV_KEY_INFO *info = d2i_PKCS8_PRIV_KEY_INFO(NULL, &q, (long)len);
    EVP_PKEY *back = info ? EVP_PKCS82PKEY(info) : NULL;
    CHECK(back && EVP_PKEY_eq(back, k->key) == 1);
    EVP_PKEY_free(back);
    PKCS8_PRIV_KEY_INFO_free(info);
  }
  tb_pem_key_free(der, len);

  CHECK(tb_pem_read_key(p, "wrong", "certificateKeyPassword", &der, &len, &err) == -1);
  CHECK(err.kind == TB_ERR_SSL && strstr(err.msg, "wrong certificateKeyPassword?") != NULL);
  CHECK(once(err.msg, "bad decrypt ("));
  CHECK(der == NULL && len == 0);
  CHECK(tb_pem_read_key(p, NULL, "certificateKeyPassword", &der, &len, &err) == -1); /* never prompts */
  CHECK(strstr(err.msg, "encrypted and certificateKeyPassword is not set") != NULL);
  CHECK(once(err.msg, "bad password read ("));
  path(p, sizeof p, "damaged.pem"); /* certificates only, one of them damaged */
  CHECK(tb_pem_read_key(p, "s3cret", NULL, &der, &len, &err) == -1);
  CHECK(err.kind == TB_ERR_SSL && strstr(err.msg, "no private key OpenSSL can read") != NULL);
  path(p, sizeof p, "enc.key");
  CHECK(tb_pem_read_key(p, "wrong", NULL, &der, &len, &err) == -1);
  CHECK(strstr(err.msg, "(wrong password?)") != NULL);

  path(p, sizeof p, "both.pem");
  CHECK(tb_pem_read_key(p, NULL, NULL, &der, &len, &err) == 0);
  tb_pem_key_free(der, len);

  path(p, sizeof p, "absent.pem");
  CHECK(tb_pem_read_key(p, NULL, NULL, &der, &len, &err) == -1 && err.kind == TB_ERR_IO);
}

static void test_certs(void) {
  char p[256];
  tb_error err;
  tb_der_list l;
  path(p, sizeof p, "both.pem");
  CHECK(tb_pem_read_certs(p, &l, &err) == 0 && l.n == 2);
  tb_der_list_free(&l);
  path(p, sizeof p, "enc.key");
  CHECK(tb_pem_read_certs(p, &l, &err) == -1 && strstr(err.msg, "no certificate") != NULL);
  CHECK(l.n == 0 && l.der == NULL);
  path(p, sizeof p, "damaged.pem");
  CHECK(tb_pem_read_certs(p, &l, &err) == -1 && err.kind == TB_ERR_SSL);
  path(p, sizeof p, "absent.pem");
  CHECK(tb_pem_read_certs(p, &l, &err) == -1 && err.kind == TB_ERR_IO);
}

struct names {
  char got[16][64];
  int n;
};

static void collect(void *arg, const char *std) {
  struct names *a = arg;
  if (a->n < 16)
    snprintf(a->got[a->n], sizeof a->got[0], "%s", std);
  a->n++;
}

static void test_ciphers(void) {
  tb_error err;
  struct names a;
  memset(&a, 0, sizeof a);
  CHECK(tb_cipher_spec_expand("ECDHE-RSA-AES256-GCM-SHA384, TLS_AES_128_GCM_SHA256:ECDHE-RSA-AES128-GCM-SHA256",
                              collect, &a, &err) == 3);
  CHECK(strcmp(a.got[0], "TLS_AES_128_GCM_SHA256") == 0);
  CHECK(strcmp(a.got[1], "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384") == 0);
  CHECK(strcmp(a.got[2], "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256") == 0);

  memset(&a, 0, sizeof a); /* TLS 1.3 only: no TLS 1.2 suite at all */
  CHECK(tb_cipher_spec_expand("TLS_AES_256_GCM_SHA384", collect, &a, &err) == 1);
  CHECK(strcmp(a.got[0], "TLS_AES_256_GCM_SHA384") == 0);

  memset(&a, 0, sizeof a); /* 1.2 only: OpenSSL's TLS 1.3 defaults stay */
  CHECK(tb_cipher_spec_expand("ECDHE+AESGCM:!ECDSA", collect, &a, &err) >= 3 + 2);

  CHECK(tb_cipher_spec_expand("NO-SUCH-CIPHER", collect, &a, &err) == -1);
  CHECK(err.kind == TB_ERR_ARGUMENT && strstr(err.msg, "no cipher match") != NULL);
  CHECK(tb_cipher_spec_expand("TLS_AES_128_GCM_SHA256:ECDHE-RSA-AES128-GCM-SHA256:TLS_NOPE", collect, &a,
                              &err) == 2); /* unknown tokens are OpenSSL's to ignore */
  CHECK(tb_cipher_spec_expand("", collect, &a, &err) >= 0);
}

/* A context's lists (Tomcat's host ciphers) reach an SSL made from it
 * without a per-SSL parse; an SSL given its own lists parses them. */
static void test_ctx_ciphers(void) {
  tb_error err;
  SSL_CTX *ctx = tb_ctx_new(&err);
  SSL *held, *own;
  STACK_OF(SSL_CIPHER) *sk;
  CHECK(ctx != NULL);
  if (!ctx)
    return;
  CHECK(tb_ctx_ciphers(ctx, "ECDHE-RSA-CHACHA20-POLY1305:ECDHE-RSA-AES128-GCM-SHA256", "", &err) == 0);
  held = SSL_new(ctx);
  own = SSL_new(ctx);
  CHECK(held && own);
  if (held && own) {
    CHECK(!tb_ssl_own_ciphers(held));
    sk = SSL_get_ciphers(held); /* no TLS 1.3 suite, the TLS 1.2 ones in the given order */
    CHECK(sk && sk_SSL_CIPHER_num(sk) == 2);
    CHECK(sk && strcmp(SSL_CIPHER_get_name(sk_SSL_CIPHER_value(sk, 0)), "ECDHE-RSA-CHACHA20-POLY1305") == 0);
    CHECK(tb_configure(own, "ECDHE-RSA-AES256-GCM-SHA384", NULL, 0, 0, &err) == 0);
    CHECK(tb_ssl_own_ciphers(own) && !tb_ssl_own_ciphers(held));
  }
  CHECK(tb_ctx_ciphers(ctx, "NO-SUCH-CIPHER", NULL, &err) == -1 && err.kind == TB_ERR_ARGUMENT);
  SSL_free(held);
  SSL_free(own);
  tb_ctx_free(ctx);
}

/* The live counts follow OpenSSL's real frees: a context outlives our
 * reference while an engine made from it is alive. */
static void test_live(void) {
  tb_error err;
  long c0 = tb_live_count(TB_LIVE_CONTEXTS), s0 = tb_live_count(TB_LIVE_SSLS), k0 = tb_live_count(TB_LIVE_KEYS);
  SSL_CTX *ctx = tb_ctx_new(&err);
  tb_keymat *k = tb_test_keymat("ec");
  tb_engine *e;
  CHECK(ctx != NULL && k != NULL);
  if (!ctx || !k)
    return;
  CHECK(tb_live_count(TB_LIVE_CONTEXTS) == c0 + 1 && tb_live_count(TB_LIVE_KEYS) == k0 + 1);
  e = tb_engine_new(ctx, 0, &err);
  CHECK(e != NULL && tb_live_count(TB_LIVE_SSLS) == s0 + 1);
  tb_ctx_free(ctx);
  CHECK(tb_live_count(TB_LIVE_CONTEXTS) == c0 + 1);
  tb_engine_free(e);
  CHECK(tb_live_count(TB_LIVE_CONTEXTS) == c0 && tb_live_count(TB_LIVE_SSLS) == s0);
  tb_keymat_free(k);
  CHECK(tb_live_count(TB_LIVE_KEYS) == k0);
  CHECK(tb_live_count(TB_LIVE_KINDS) == -1);
}

int main(void) {
  tb_keymat *k;
  char p[256];
  const char *names[] = {"enc.key", "both.pem", "damaged.pem"};
  size_t i;
  CHECK(mkdtemp(dir) != NULL);
  k = tb_test_keymat("ec");
  CHECK(k != NULL);
  if (!k)
    return 1;
  write_files(k);
  test_keys(k);
  test_certs();
  test_ciphers();
  test_ctx_ciphers();
  test_live();
  tb_keymat_free(k);
  for (i = 0; i < sizeof names / sizeof names[0]; i++) {
    path(p, sizeof p, names[i]);
    unlink(p);
  }
  rmdir(dir);
  return tb_test_finish("config");
}
