#ifndef TB_PEM_H
#define TB_PEM_H
#include "tb.h"

/* DER blobs handed to the caller; free with tb_der_list_free. */
typedef struct tb_der_list {
  uint8_t **der;
  size_t *len;
  int n;
} tb_der_list;

void tb_der_list_free(tb_der_list *l);

/* The first private key in a PEM file (PKCS#1, SEC1, PKCS#8, encrypted
 * PKCS#8 or legacy encrypted PEM), re-encoded as unencrypted PKCS#8 DER into
 * *out (OPENSSL_secure-free it with tb_pem_key_free). password may be NULL:
 * an encrypted key then fails instead of prompting on a terminal.
 * password_name is the setting the password came from, as the user wrote
 * it, for the error message (NULL: "the password"). */
int tb_pem_read_key(const char *path, const char *password, const char *password_name, uint8_t **out,
                    size_t *outlen, tb_error *err);
void tb_pem_key_free(uint8_t *der, size_t len);

/* Every certificate in a PEM file, in file order, as DER. At least one is
 * required. */
int tb_pem_read_certs(const char *path, tb_der_list *out, tb_error *err);
#endif
