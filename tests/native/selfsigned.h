/* A self-signed certificate for test servers, shared by the engine tests
 * and the probe's load driver. Header-only, so any test that includes
 * test_support.c needs no extra source in its CMake target. */
#ifndef TB_TEST_SELFSIGNED_H
#define TB_TEST_SELFSIGNED_H
#include <openssl/evp.h>
#include <openssl/x509.h>

/* CN=cn, valid from an hour ago for a day, signed by pk; NULL on failure. */
static inline X509 *tb_test_selfsigned(EVP_PKEY *pk, const char *cn) {
  X509 *x = X509_new();
  X509_NAME *n;
  if (!x)
    return NULL;
  X509_set_version(x, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
  X509_gmtime_adj(X509_getm_notBefore(x), -3600);
  X509_gmtime_adj(X509_getm_notAfter(x), 86400);
  X509_set_pubkey(x, pk);
  /* a name of its own: OpenSSL 4.0's X509_get_subject_name returns const */
  n = X509_NAME_new();
  if (!n || !X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0) ||
      !X509_set_subject_name(x, n) || !X509_set_issuer_name(x, n)) {
    X509_NAME_free(n);
    X509_free(x);
    return NULL;
  }
  X509_NAME_free(n);
  if (!X509_sign(x, pk, EVP_sha256())) {
    X509_free(x);
    return NULL;
  }
  return x;
}
#endif
