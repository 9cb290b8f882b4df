#ifndef TB_CIPHERS_H
#define TB_CIPHERS_H
#include "tb.h"

int tb_ciphers_each(void (*fn)(void *arg, const char *std, const char *ossl, int tls13), void *arg,
                    tb_error *err);
/* NULL list12 / list13 leaves that list alone; "" for list13 disables TLS 1.3
 * suites. Versions are TLS1_2_VERSION-style numbers, 0 = unchanged. */
int tb_configure(SSL *ssl, const char *list12, const char *list13, int min_version, int max_version,
                 tb_error *err);
#endif
