/* A self-signed certificate for test servers, shared by the engine tests
 * and the probe's load driver. */
#ifndef TB_TEST_SELFSIGNED_H
#define TB_TEST_SELFSIGNED_H
#include <openssl/evp.h>
#include <openssl/x509.h>

/* CN=cn, valid from an hour ago for a day, signed by pk; NULL on failure. */
X509 *tb_test_selfsigned(EVP_PKEY *pk, const char *cn);
#endif
