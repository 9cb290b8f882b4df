#ifndef TB_KEYS_H
#define TB_KEYS_H
#include "tb.h"

/* Immutable after creation and shared by handshakes on any thread; freed
 * when the last reference (Java's, or a handshake's) goes. */
typedef struct tb_keymat {
  EVP_PKEY *key;
  X509 *cert;
  STACK_OF(X509) *chain;  /* intermediates, leaf excluded */
  unsigned char *ocsp;    /* DER OCSPResponse to staple, or NULL */
  size_t ocsp_len;
  int refs;               /* atomic */
} tb_keymat;

tb_keymat *tb_keymat_from_der(const uint8_t *pkcs8, size_t keylen, const uint8_t *const *certs,
                              const size_t *lens, int n, tb_error *err);
void tb_keymat_free(tb_keymat *k); /* drops one reference */
tb_keymat *tb_keymat_ref(tb_keymat *k);
int tb_keymat_set_ocsp(tb_keymat *k, const uint8_t *der, size_t len); /* before sharing only */
int tb_keymat_use(tb_engine *e, tb_keymat *k, tb_error *err);
const tb_keymat *tb_keymat_in_use(const tb_engine *e);
const char *tb_keymat_type(const tb_keymat *k);
#endif
