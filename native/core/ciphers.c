/* Cipher suite names: OpenSSL's standard (IANA) names are Java's standard
 * names, so the map is read from OpenSSL rather than kept by hand. */
#include "ciphers.h"

#include <string.h>
#include <openssl/err.h>

/* Everything a user may enable by name. The defaults (context.c) are the
 * forward-secret AEAD subset of this. */
static const char SUPPORTED_12[] =
    "ECDHE+AESGCM:ECDHE+CHACHA20:DHE+AESGCM:DHE+CHACHA20:ECDHE+AES:RSA+AESGCM:RSA+AES"
    ":!aNULL:!eNULL:!PSK:!SRP:!DSS:!CAMELLIA:!ARIA:!SEED:!3DES:!RC4:!MD5:!IDEA:!AESCCM:!AESCCM8:@SECLEVEL=0";
static const char SUPPORTED_13[] =
    "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256";

int tb_ciphers_each(void (*fn)(void *arg, const char *std, const char *ossl, int tls13), void *arg,
                    tb_error *err) {
  SSL_CTX *ctx;
  STACK_OF(SSL_CIPHER) *sk;
  int i, n = 0;
  ERR_clear_error();
  ctx = SSL_CTX_new(TLS_method());
  if (!ctx || !SSL_CTX_set_cipher_list(ctx, SUPPORTED_12) || !SSL_CTX_set_ciphersuites(ctx, SUPPORTED_13)) {
    tb_err_from_openssl(err, TB_ERR_SSL, "cannot list cipher suites");
    SSL_CTX_free(ctx);
    return -1;
  }
  sk = SSL_CTX_get_ciphers(ctx);
  for (i = 0; i < sk_SSL_CIPHER_num(sk); i++) {
    const SSL_CIPHER *c = sk_SSL_CIPHER_value(sk, i);
    const char *std = SSL_CIPHER_standard_name(c);
    if (!std)
      continue;
    fn(arg, std, SSL_CIPHER_get_name(c), strcmp(SSL_CIPHER_get_version(c), "TLSv1.3") == 0);
    n++;
  }
  SSL_CTX_free(ctx);
  return n;
}

/* The one place a suite list is handed to OpenSSL, for a context at init
 * (ssl NULL) or for one SSL, so both read the lists and fail the same way. */
static int set_lists(SSL_CTX *ctx, SSL *ssl, const char *list12, const char *list13, tb_error *err) {
  tb_err_reset();
  if (list12 && *list12 && !(ssl ? SSL_set_cipher_list(ssl, list12) : SSL_CTX_set_cipher_list(ctx, list12))) {
    tb_err_from_openssl(err, TB_ERR_ARGUMENT, "cannot set TLS 1.2 cipher suites");
    return -1;
  }
  if (list13 && !(ssl ? SSL_set_ciphersuites(ssl, list13) : SSL_CTX_set_ciphersuites(ctx, list13))) {
    tb_err_from_openssl(err, TB_ERR_ARGUMENT, "cannot set TLS 1.3 cipher suites");
    return -1;
  }
  return 0;
}

int tb_ctx_ciphers(SSL_CTX *ctx, const char *list12, const char *list13, tb_error *err) {
  return set_lists(ctx, NULL, list12, list13, err);
}

int tb_ssl_own_ciphers(const SSL *ssl) {
  return SSL_get_ciphers(ssl) != SSL_CTX_get_ciphers(SSL_get_SSL_CTX(ssl));
}

int tb_configure(SSL *ssl, const char *list12, const char *list13, int min_version, int max_version,
                 tb_error *err) {
  if (set_lists(NULL, ssl, list12, list13, err) != 0)
    return -1;
  if ((min_version && !SSL_set_min_proto_version(ssl, min_version)) ||
      (max_version && !SSL_set_max_proto_version(ssl, max_version))) {
    tb_err_from_openssl(err, TB_ERR_ARGUMENT, "cannot set protocol versions");
    return -1;
  }
  return 0;
}
