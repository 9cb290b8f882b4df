#include "selfsigned.h"

X509 *tb_test_selfsigned(EVP_PKEY *pk, const char *cn) {
  X509 *x = X509_new();
  X509_NAME *n;
  if (!x)
    return NULL;
  X509_set_version(x, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
  X509_gmtime_adj(X509_getm_notBefore(x), -3600);
  X509_gmtime_adj(X509_getm_notAfter(x), 86400);
  X509_set_pubkey(x, pk);
  n = X509_get_subject_name(x);
  X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
  X509_set_issuer_name(x, n);
  if (!X509_sign(x, pk, EVP_sha256())) {
    X509_free(x);
    return NULL;
  }
  return x;
}
