/* OpenSSL callbacks that need Java (trust, key choice). Where OpenSSL can
 * park the handshake (a client's retry-verify, cert_cb returning -1) they do,
 * so the engine reports NEED_TASK and a Java task answers before the next
 * step. A server verifying a client certificate cannot be parked in OpenSSL
 * 3.0, so that one question goes to the glue layer's synchronous hook. */
#include "tb.h"

#include <openssl/x509v3.h>

static const tb_hooks *hooks;

void tb_set_hooks(const tb_hooks *h) { hooks = h; }

static STACK_OF(X509) *chain_of(X509_STORE_CTX *xs) {
  STACK_OF(X509) *untrusted = X509_STORE_CTX_get0_untrusted(xs);
  X509 *leaf = X509_STORE_CTX_get0_cert(xs);
  STACK_OF(X509) *chain = sk_X509_new_null();
  int i, ok = chain != NULL && leaf != NULL && X509_up_ref(leaf);
  if (ok && sk_X509_push(chain, leaf) <= 0) {
    X509_free(leaf);
    ok = 0;
  }
  for (i = 0; ok && untrusted && i < sk_X509_num(untrusted); i++) {
    X509 *c = sk_X509_value(untrusted, i);
    if (c == leaf || X509_cmp(c, leaf) == 0)
      continue;
    ok = X509_up_ref(c);
    if (ok && sk_X509_push(chain, c) <= 0) {
      X509_free(c);
      ok = 0;
    }
  }
  if (!ok) {
    sk_X509_pop_free(chain, X509_free);
    return NULL;
  }
  return chain;
}

/* OpenSSL's security level applied to the chain the peer sent: its own
 * X509_verify_cert would check key sizes and signature strength, but trust
 * is decided in Java here, so without this a 1024-bit RSA peer passes. */
static int chain_meets_level(SSL *ssl, STACK_OF(X509) *chain, int *x509_err) {
  static const int need[] = {0, 80, 112, 128, 192, 256};
  int level = SSL_get_security_level(ssl), i;
  if (level <= 0)
    return 1;
  if (level > 5)
    level = 5;
  /* A malformed extension makes OpenSSL queue an error while it caches the
   * flags; whether such a chain is trusted is Java's call, and a queued
   * error would be read as the next record's failure. */
  ERR_set_mark();
  for (i = 0; i < sk_X509_num(chain); i++) {
    X509 *c = sk_X509_value(chain, i);
    EVP_PKEY *k = X509_get0_pubkey(c);
    int kbits = k ? EVP_PKEY_get_security_bits(k) : 0, sbits = 0;
    if (kbits < need[level]) {
      ERR_pop_to_mark();
      *x509_err = i == 0 ? X509_V_ERR_EE_KEY_TOO_SMALL : X509_V_ERR_CA_KEY_TOO_SMALL;
      ERR_raise_data(ERR_LIB_SSL, i == 0 ? SSL_R_EE_KEY_TOO_SMALL : SSL_R_CA_KEY_TOO_SMALL,
                     "peer certificate %d: key of %d-bit security, OpenSSL security level %d needs %d", i, kbits,
                     level, need[level]);
      return 0;
    }
    /* a self-signed certificate's signature proves nothing either way */
    if (!(X509_get_extension_flags(c) & EXFLAG_SS) && X509_get_signature_info(c, NULL, NULL, &sbits, NULL) &&
        sbits < need[level]) {
      ERR_pop_to_mark();
      *x509_err = X509_V_ERR_CA_MD_TOO_WEAK;
      ERR_raise_data(ERR_LIB_SSL, SSL_R_CA_MD_TOO_WEAK,
                     "peer certificate %d: signature of %d-bit security, OpenSSL security level %d needs %d", i,
                     sbits, level, need[level]);
      return 0;
    }
  }
  ERR_pop_to_mark();
  return 1;
}

static int verify_cb(X509_STORE_CTX *xs, void *arg) {
  SSL *ssl = X509_STORE_CTX_get_ex_data(xs, SSL_get_ex_data_X509_STORE_CTX_idx());
  tb_engine *e = ssl ? tb_engine_of(ssl) : NULL;
  (void)arg;
  if (!e) {
    X509_STORE_CTX_set_error(xs, X509_V_ERR_UNSPECIFIED);
    return 0;
  }
  if (e->verify_result < 0) {
    STACK_OF(X509) *chain = chain_of(xs);
    int x509_err = X509_V_ERR_UNSPECIFIED;
    if (chain && !chain_meets_level(ssl, chain, &x509_err)) {
      sk_X509_pop_free(chain, X509_free);
      tb_engine_set_verify_result(e, 0, x509_err);
      X509_STORE_CTX_set_error(xs, x509_err);
      return 0;
    }
    sk_X509_pop_free(chain, X509_free);
  }
  if (e->verify_result < 0 && !(e->flags & TB_F_CLIENT)) {
    STACK_OF(X509) *chain = chain_of(xs);
    int ok = 0, x509_err = X509_V_ERR_UNSPECIFIED;
    if (chain && hooks && hooks->verify_peer)
      ok = hooks->verify_peer(e, chain, &x509_err);
    sk_X509_pop_free(chain, X509_free);
    tb_engine_set_verify_result(e, ok, ok ? 0 : x509_err);
  } else if (e->verify_result < 0) {
    STACK_OF(X509) *chain = chain_of(xs);
    /* the client's way to park: flag the retry, then return 1 */
    if (!chain || !SSL_set_retry_verify(ssl)) {
      sk_X509_pop_free(chain, X509_free);
      X509_STORE_CTX_set_error(xs, X509_V_ERR_OUT_OF_MEM);
      return 0;
    }
    sk_X509_pop_free(e->pending_chain, X509_free);
    e->pending_chain = chain;
    return 1;
  }
  sk_X509_pop_free(e->pending_chain, X509_free);
  e->pending_chain = NULL;
  if (e->verify_result == 1) {
    X509_STORE_CTX_set_error(xs, X509_V_OK);
    return 1;
  }
  X509_STORE_CTX_set_error(xs, e->verify_error ? e->verify_error : X509_V_ERR_UNSPECIFIED);
  return 0;
}

static int cert_cb(SSL *ssl, void *arg) {
  tb_engine *e = tb_engine_of(ssl);
  (void)arg;
  if (!e || e->cert_ready)
    return 1;
  return -1; /* SSL_ERROR_WANT_X509_LOOKUP: Java's KeyManager chooses */
}

void tb_install_callbacks(SSL_CTX *ctx) {
  tb_install_extensions(ctx);
  SSL_CTX_set_cert_verify_callback(ctx, verify_cb, NULL);
  SSL_CTX_set_cert_cb(ctx, cert_cb, NULL);
}
