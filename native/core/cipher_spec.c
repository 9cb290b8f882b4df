/* OpenSSL cipher strings resolved by OpenSSL itself, on a throw-away
 * SSL_CTX, so aliases, exclusions, @STRENGTH and @SECLEVEL mean exactly
 * what they mean to OpenSSL. */
#include "cipher_spec.h"
#include "tb_alloc.h"

#include <stdlib.h>
#include <string.h>
#include <openssl/err.h>

static int is_tls13_name(const char *tok, size_t n) {
  static const char *const names[] = {"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384",
                                      "TLS_CHACHA20_POLY1305_SHA256", "TLS_AES_128_CCM_SHA256",
                                      "TLS_AES_128_CCM_8_SHA256"};
  size_t i;
  for (i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strlen(names[i]) == n && memcmp(names[i], tok, n) == 0)
      return 1;
  return 0;
}

static void append(char *dst, size_t *used, const char *tok, size_t n) {
  if (*used)
    dst[(*used)++] = ':';
  memcpy(dst + *used, tok, n);
  *used += n;
  dst[*used] = '\0';
}

/* Splits the string into TLS 1.3 suite names and everything else (OpenSSL
 * accepts ':', ',' and ' ' as separators in both). */
static int split(const char *spec, char *list12, char *list13) {
  size_t u12 = 0, u13 = 0;
  const char *p = spec;
  list12[0] = list13[0] = '\0';
  while (*p) {
    size_t n = strcspn(p, ":, ");
    if (n > 0) {
      if (is_tls13_name(p, n))
        append(list13, &u13, p, n);
      else
        append(list12, &u12, p, n);
    }
    p += n;
    if (*p)
      p++;
  }
  return u13 > 0;
}

int tb_cipher_spec_expand(const char *spec, void (*fn)(void *arg, const char *std), void *arg, tb_error *err) {
  size_t len = strlen(spec);
  char *list12 = tb_malloc(len + 1), *list13 = tb_malloc(len + 1);
  SSL_CTX *ctx = NULL;
  STACK_OF(SSL_CIPHER) *sk;
  int i, n = -1, has13;
  if (!list12 || !list13) {
    tb_err_set(err, TB_ERR_MEMORY, "out of memory");
    goto out;
  }
  has13 = split(spec, list12, list13);
  ERR_clear_error();
  ctx = SSL_CTX_new(TLS_method());
  if (!ctx) {
    tb_err_from_openssl(err, TB_ERR_SSL, "SSL_CTX_new failed");
    goto out;
  }
  if (has13 && !SSL_CTX_set_ciphersuites(ctx, list13)) {
    tb_err_from_openssl(err, TB_ERR_ARGUMENT, "invalid TLS 1.3 cipher suites");
    goto out;
  }
  /* An empty remainder means "TLS 1.3 suites only"; OpenSSL refuses an
   * empty list, so an impossible selector empties it instead. */
  if (!SSL_CTX_set_cipher_list(ctx, list12[0] ? list12 : "!ALL") && list12[0]) {
    tb_err_from_openssl(err, TB_ERR_ARGUMENT, "cipher string selects no suite");
    goto out;
  }
  ERR_clear_error();
  sk = SSL_CTX_get_ciphers(ctx);
  n = 0;
  for (i = 0; i < sk_SSL_CIPHER_num(sk); i++) {
    const char *std = SSL_CIPHER_standard_name(sk_SSL_CIPHER_value(sk, i));
    if (std) {
      fn(arg, std);
      n++;
    }
  }
out:
  SSL_CTX_free(ctx);
  free(list12);
  free(list13);
  return n;
}
