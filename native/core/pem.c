/* PEM files as Tomcat's SSLHostConfig names them (certificateFile,
 * certificateKeyFile, certificateChainFile, caCertificateFile), read by
 * OpenSSL's own decoders so every key format and encryption OpenSSL knows
 * is accepted, and handed back as DER for Java's KeyManager/KeyStore. */
#include "pem.h"
#include "tb_alloc.h"

#include <stdlib.h>
#include <string.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/evp.h>

void tb_der_list_free(tb_der_list *l) {
  int i;
  if (!l)
    return;
  for (i = 0; i < l->n; i++)
    OPENSSL_free(l->der[i]);
  free(l->der);
  free(l->len);
  l->der = NULL;
  l->len = NULL;
  l->n = 0;
}

/* Never the default callback: it would prompt on the controlling terminal
 * and hang a server started from a shell. */
static int password_cb(char *buf, int size, int rwflag, void *u) {
  const char *pw = u;
  size_t n;
  (void)rwflag;
  if (!pw || size <= 0)
    return -1;
  n = strlen(pw);
  if (n > (size_t)size)
    return -1;
  memcpy(buf, pw, n);
  return (int)n;
}

/* What the user can do about a key OpenSSL did not read, told by the
 * outermost reason (the last one queued); the caller's exception adds which
 * file it was. */
static void key_failure(const char *password_name, char *out, size_t n) {
  unsigned long last = ERR_peek_last_error();
  int lib = ERR_GET_LIB(last), reason = ERR_GET_REASON(last);
  if (lib == ERR_LIB_PEM && reason == PEM_R_BAD_PASSWORD_READ && password_name)
    snprintf(out, n, "the private key is encrypted and %s is not set", password_name);
  else if (lib == ERR_LIB_PEM && reason == PEM_R_BAD_PASSWORD_READ)
    snprintf(out, n, "the private key is encrypted and no password is given");
  else if ((lib == ERR_LIB_PEM && reason == PEM_R_BAD_DECRYPT) ||
           (lib == ERR_LIB_PKCS12 && reason == PKCS12_R_PKCS12_CIPHERFINAL_ERROR) ||
           (lib == ERR_LIB_EVP && reason == EVP_R_BAD_DECRYPT) ||
           /* a wrong password passes CBC's padding check about once in 256
            * tries: the garbage it decrypted then fails to decode */
           (lib == ERR_LIB_PKCS12 && reason == PKCS12_R_DECODE_ERROR && password_name))
    snprintf(out, n, "cannot decrypt the private key (wrong %s?)", password_name ? password_name : "password");
  else
    snprintf(out, n, "no private key OpenSSL can read (PEM: PKCS#8, PKCS#1 or SEC1)");
}

static BIO *open_file(const char *path, const char *what, tb_error *err) {
  BIO *b;
  ERR_clear_error();
  b = BIO_new_file(path, "r");
  if (!b) {
    char msg[160];
    snprintf(msg, sizeof msg, "cannot open %s file", what);
    tb_err_from_openssl(err, TB_ERR_IO, msg);
  }
  return b;
}

int tb_pem_read_key(const char *path, const char *password, const char *password_name, uint8_t **out,
                    size_t *outlen, tb_error *err) {
  BIO *b = open_file(path, "private key", err);
  EVP_PKEY *key;
  PKCS8_PRIV_KEY_INFO *p8 = NULL;
  unsigned char *der = NULL;
  int len = -1;
  *out = NULL;
  *outlen = 0;
  if (!b)
    return -1;
  key = PEM_read_bio_PrivateKey(b, NULL, password_cb, (void *)password);
  BIO_free(b);
  if (!key) {
    char what[200];
    key_failure(password_name, what, sizeof what);
    tb_err_from_openssl(err, TB_ERR_SSL, what);
    return -1;
  }
  p8 = EVP_PKEY2PKCS8(key);
  if (p8)
    len = i2d_PKCS8_PRIV_KEY_INFO(p8, &der);
  PKCS8_PRIV_KEY_INFO_free(p8);
  EVP_PKEY_free(key);
  if (len <= 0) {
    tb_err_from_openssl(err, TB_ERR_SSL, "cannot encode the private key as PKCS#8");
    return -1;
  }
  *out = der;
  *outlen = (size_t)len;
  return 0;
}

void tb_pem_key_free(uint8_t *der, size_t len) {
  if (der)
    OPENSSL_clear_free(der, len);
}

static int push(tb_der_list *l, uint8_t *der, size_t len) {
  uint8_t **d = tb_realloc(l->der, (size_t)(l->n + 1) * sizeof *d);
  size_t *n;
  if (!d)
    return -1;
  l->der = d;
  n = tb_realloc(l->len, (size_t)(l->n + 1) * sizeof *n);
  if (!n)
    return -1;
  l->len = n;
  l->der[l->n] = der;
  l->len[l->n] = len;
  l->n++;
  return 0;
}

int tb_pem_read_certs(const char *path, tb_der_list *out, tb_error *err) {
  BIO *b = open_file(path, "certificate", err);
  X509 *x;
  unsigned long last;
  memset(out, 0, sizeof *out);
  if (!b)
    return -1;
  while ((x = PEM_read_bio_X509(b, NULL, NULL, NULL)) != NULL) {
    unsigned char *der = NULL;
    int len = i2d_X509(x, &der);
    X509_free(x);
    if (len <= 0 || push(out, der, (size_t)len) < 0) {
      OPENSSL_free(der);
      tb_err_from_openssl(err, TB_ERR_MEMORY, "cannot collect certificates");
      goto bad;
    }
  }
  /* The loop ends on "no start line" at end of file; anything else is a
   * damaged certificate, not the end of the list. */
  last = ERR_peek_last_error();
  if (last && !(ERR_GET_LIB(last) == ERR_LIB_PEM && ERR_GET_REASON(last) == PEM_R_NO_START_LINE)) {
    tb_err_from_openssl(err, TB_ERR_SSL, "cannot read a certificate");
    goto bad;
  }
  ERR_clear_error();
  if (out->n == 0) {
    tb_err_set(err, TB_ERR_SSL, "no certificate found");
    goto bad;
  }
  BIO_free(b);
  return 0;
bad:
  BIO_free(b);
  tb_der_list_free(out);
  return -1;
}
