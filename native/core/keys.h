#ifndef TB_KEYS_H
#define TB_KEYS_H
#include "tb.h"

typedef struct tb_keymat {
  EVP_PKEY *key;
  X509 *cert;
  STACK_OF(X509) *chain; /* intermediates, leaf excluded */
} tb_keymat;

tb_keymat *tb_keymat_from_der(const uint8_t *pkcs8, size_t keylen, const uint8_t *const *certs,
                              const size_t *lens, int n, tb_error *err);
void tb_keymat_free(tb_keymat *k);
int tb_keymat_use(SSL *ssl, const tb_keymat *k, tb_error *err);
const char *tb_keymat_type(const tb_keymat *k);
#endif
