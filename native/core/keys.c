/* Key material from Java's KeyManager (PKCS#8 key, DER chain) parsed once
 * into OpenSSL objects and shared read-only by every handshake that uses it. */
#include "keys.h"
#include "live.h"
#include "tb_alloc.h"

#include <stdlib.h>
#include <openssl/err.h>
#include <openssl/evp.h>

tb_keymat *tb_keymat_ref(tb_keymat *k) {
  __atomic_add_fetch(&k->refs, 1, __ATOMIC_RELAXED);
  return k;
}

void tb_keymat_free(tb_keymat *k) {
  if (!k || __atomic_sub_fetch(&k->refs, 1, __ATOMIC_ACQ_REL) > 0)
    return;
  OPENSSL_free(k->ocsp);
  EVP_PKEY_free(k->key);
  X509_free(k->cert);
  sk_X509_pop_free(k->chain, X509_free);
  free(k);
  tb_live_add(TB_LIVE_KEYS, -1);
}

static X509 *cert_from_der(const uint8_t *der, size_t len) {
  const unsigned char *p = der;
  X509 *x = d2i_X509(NULL, &p, (long)len);
  if (x && p != der + len) {
    X509_free(x);
    return NULL;
  }
  return x;
}

tb_keymat *tb_keymat_from_der(const uint8_t *pkcs8, size_t keylen, const uint8_t *const *certs,
                              const size_t *lens, int n, tb_error *err) {
  tb_keymat *k;
  const unsigned char *p = pkcs8;
  PKCS8_PRIV_KEY_INFO *info;
  int i;
  if (n < 1) {
    tb_err_set(err, TB_ERR_ARGUMENT, "key material needs at least one certificate");
    return NULL;
  }
  k = tb_calloc(1, sizeof *k);
  if (!k) {
    tb_err_set(err, TB_ERR_MEMORY, "out of memory");
    return NULL;
  }
  k->refs = 1;
  tb_live_add(TB_LIVE_KEYS, 1);
  ERR_clear_error();
  info = d2i_PKCS8_PRIV_KEY_INFO(NULL, &p, (long)keylen);
  if (info) {
    k->key = EVP_PKCS82PKEY(info);
    PKCS8_PRIV_KEY_INFO_free(info);
  }
  if (!k->key) {
    tb_err_from_openssl(err, TB_ERR_ARGUMENT, "cannot parse the private key (PKCS#8)");
    goto bad;
  }
  k->cert = cert_from_der(certs[0], lens[0]);
  k->chain = sk_X509_new_null();
  if (!k->cert || !k->chain) {
    tb_err_from_openssl(err, TB_ERR_ARGUMENT, "cannot parse the certificate");
    goto bad;
  }
  for (i = 1; i < n; i++) {
    X509 *c = cert_from_der(certs[i], lens[i]);
    if (!c || sk_X509_push(k->chain, c) <= 0) {
      X509_free(c);
      tb_err_from_openssl(err, TB_ERR_ARGUMENT, "cannot parse a chain certificate");
      goto bad;
    }
  }
  if (!X509_check_private_key(k->cert, k->key)) {
    tb_err_from_openssl(err, TB_ERR_ARGUMENT, "private key does not match the certificate");
    goto bad;
  }
  return k;
bad:
  tb_keymat_free(k);
  return NULL;
}

int tb_keymat_set_ocsp(tb_keymat *k, const uint8_t *der, size_t len) {
  unsigned char *copy = OPENSSL_memdup(der, len);
  if (!copy)
    return -1;
  OPENSSL_free(k->ocsp);
  k->ocsp = copy;
  k->ocsp_len = len;
  return 0;
}

int tb_keymat_use(tb_engine *e, tb_keymat *k, tb_error *err) {
  ERR_clear_error();
  /* override=1: a second choice of the same key type replaces the first */
  if (!SSL_use_cert_and_key(e->ssl, k->cert, k->key, k->chain, 1)) {
    tb_err_from_openssl(err, TB_ERR_SSL, "cannot install the chosen certificate");
    return -1;
  }
  /* the engine keeps the key (and its staple) until it is freed */
  if (e->n_offered < (int)(sizeof e->offered / sizeof e->offered[0]))
    e->offered[e->n_offered++] = tb_keymat_ref(k);
  return 0;
}

/* The installed key whose certificate this handshake used, if any. */
const tb_keymat *tb_keymat_in_use(const tb_engine *e) {
  X509 *cert = SSL_get_certificate(e->ssl);
  int i;
  for (i = 0; cert && i < e->n_offered; i++)
    if (e->offered[i]->cert == cert)
      return e->offered[i];
  return NULL;
}

const char *tb_keymat_type(const tb_keymat *k) {
  switch (EVP_PKEY_get_base_id(k->key)) {
  case EVP_PKEY_RSA: return "RSA";
  case EVP_PKEY_RSA_PSS: return "RSASSA-PSS";
  case EVP_PKEY_EC: return "EC";
  case EVP_PKEY_ED25519:
  case EVP_PKEY_ED448: return "EdDSA";
  default: return "UNKNOWN";
  }
}
