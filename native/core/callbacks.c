/* OpenSSL callbacks that need Java (trust, key choice). Where OpenSSL can
 * park the handshake (a client's retry-verify, cert_cb returning -1) they do,
 * so the engine reports NEED_TASK and a Java task answers before the next
 * step. A server verifying a client certificate cannot be parked in OpenSSL
 * 3.0, so that one question goes to the glue layer's synchronous hook. */
#include "tb.h"

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

static int verify_cb(X509_STORE_CTX *xs, void *arg) {
  SSL *ssl = X509_STORE_CTX_get_ex_data(xs, SSL_get_ex_data_X509_STORE_CTX_idx());
  tb_engine *e = ssl ? tb_engine_of(ssl) : NULL;
  (void)arg;
  if (!e) {
    X509_STORE_CTX_set_error(xs, X509_V_ERR_UNSPECIFIED);
    return 0;
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
