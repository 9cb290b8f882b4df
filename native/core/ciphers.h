#ifndef TB_CIPHERS_H
#define TB_CIPHERS_H
#include "tb.h"

int tb_ciphers_each(void (*fn)(void *arg, const char *std, const char *ossl, int tls13), void *arg,
                    tb_error *err);
/* NULL list12 / list13 leaves that list alone; "" for list13 disables TLS 1.3
 * suites. Versions are TLS1_2_VERSION-style numbers, 0 = unchanged. */
int tb_configure(SSL *ssl, const char *list12, const char *list13, int min_version, int max_version,
                 tb_error *err);
/* The same lists on a context, at init only: every SSL made from it then
 * inherits them and needs no list of its own (no parse per connection). */
int tb_ctx_ciphers(SSL_CTX *ctx, const char *list12, const char *list13, tb_error *err);
/* Non-zero once an SSL has a suite list of its own rather than its
 * context's (OpenSSL copies the context's list on the first per-SSL set). */
int tb_ssl_own_ciphers(const SSL *ssl);
#endif
