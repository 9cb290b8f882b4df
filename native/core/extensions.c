/* TLS extensions a server settles while reading the ClientHello: what the
 * client asked for (SNI, ALPN, signature_algorithms_cert) is kept on the
 * engine as bytes; when Java must judge it (SNIMatchers, an ALPN selector,
 * a server name that is not plain LDH) the handshake is parked
 * (SSL_CLIENT_HELLO_RETRY) and a delegated task answers. Also ALPN
 * selection and OCSP stapling per chosen certificate. */
#include "tb.h"
#include "tb_alloc.h"
#include "keys.h"

#include <stdlib.h>
#include <string.h>
#include <openssl/err.h>
#include <openssl/tls1.h>

static uint16_t be16(const unsigned char *p) { return (uint16_t)((p[0] << 8) | p[1]); }

/* signature_algorithms_cert, all of it (up to 32,767 schemes): what a
 * KeyManager must match a chain against (JSSE's "peer supported signature
 * algorithms"); OpenSSL has no getter. -1 when out of memory. */
static int save_cert_sigalgs(tb_engine *e, SSL *ssl) {
  const unsigned char *p;
  size_t len, i, n;
  e->n_cert_sigalgs = -1;
  if (!SSL_client_hello_get0_ext(ssl, TLSEXT_TYPE_signature_algorithms_cert, &p, &len) || len < 2)
    return 0;
  if ((size_t)be16(p) < len - 2)
    len = (size_t)be16(p) + 2;
  n = (len - 2) / 2;
  free(e->cert_sigalgs);
  e->cert_sigalgs = n ? tb_malloc(n * sizeof *e->cert_sigalgs) : NULL;
  if (n && !e->cert_sigalgs)
    return -1;
  for (i = 0; i < n; i++)
    e->cert_sigalgs[i] = be16(p + 2 + 2 * i);
  e->n_cert_sigalgs = (int)n;
  return 0;
}

/* Labels of letters, digits and inner hyphens, 1 to 63 bytes each (IDN's
 * STD3 rules for ASCII): a name SNIHostName(byte[]) accepts whatever the
 * JDK, so Java need not see it. */
static int plain_host_name(const unsigned char *p, size_t n) {
  size_t i, label = 0;
  for (i = 0; i < n; i++) {
    unsigned char c = p[i];
    if (c == '.') {
      if (label == 0 || p[i - 1] == '-')
        return 0;
      label = 0;
    } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               (c == '-' && label > 0)) {
      if (++label > 63)
        return 0;
    } else {
      return 0;
    }
  }
  return label > 0 && p[n - 1] != '-';
}

/* The first host_name of server_name, decided here once. A name no host
 * can have (empty, over 255 bytes, a NUL inside) ends the handshake now,
 * with the alert OpenSSL's own parser would send later (SunJSSE's
 * decode_error for an empty one). Any other name that is not plain LDH
 * ('_', UTF-8, ...) is judged in Java by SNIHostName(byte[]), as SunJSSE
 * does. Malformed framing is left to OpenSSL's parser. Returns the alert
 * to send, or 0. */
static int save_sni(tb_engine *e, SSL *ssl) {
  const unsigned char *p;
  size_t len, name;
  e->sni_len = -1;
  e->sni_judge = 0;
  if (!SSL_client_hello_get0_ext(ssl, TLSEXT_TYPE_server_name, &p, &len) || len < 5)
    return 0;
  if ((size_t)be16(p) + 2 > len || p[2] != TLSEXT_NAMETYPE_host_name)
    return 0;
  name = be16(p + 3);
  if (name + 5 > len)
    return 0;
  if (name == 0) {
    ERR_raise_data(ERR_LIB_SSL, SSL_R_SSL3_EXT_INVALID_SERVERNAME, "empty host_name");
    return SSL_AD_DECODE_ERROR;
  }
  if (name > sizeof e->sni || memchr(p + 5, 0, name)) {
    ERR_raise_data(ERR_LIB_SSL, SSL_R_SSL3_EXT_INVALID_SERVERNAME, "host_name of %zu bytes%s", name,
                   name > sizeof e->sni ? ", over 255" : " with a NUL byte");
    return SSL_AD_UNRECOGNIZED_NAME;
  }
  memcpy(e->sni, p + 5, name);
  e->sni_len = (int)name;
  e->sni_judge = !plain_host_name(e->sni, name);
  return 0;
}

/* The client's whole ALPN list (it may run to 64 KiB), for a selector to
 * see. -1 when out of memory. */
static int save_alpn(tb_engine *e, SSL *ssl) {
  const unsigned char *p;
  size_t len, list;
  e->alpn_offer_len = 0;
  if (!SSL_client_hello_get0_ext(ssl, TLSEXT_TYPE_application_layer_protocol_negotiation, &p, &len) ||
      len < 2)
    return 0;
  list = be16(p);
  if (list == 0 || list + 2 > len)
    return 0;
  free(e->alpn_offer);
  e->alpn_offer = tb_malloc(list);
  if (!e->alpn_offer)
    return -1;
  memcpy(e->alpn_offer, p + 2, list);
  e->alpn_offer_len = list;
  return 0;
}

static int hello_cb(SSL *ssl, int *alert, void *arg) {
  tb_engine *e = tb_engine_of(ssl);
  (void)arg;
  if (!e)
    return SSL_CLIENT_HELLO_SUCCESS;
  if (!e->hello_seen) {
    int refuse = save_sni(e, ssl);
    if (!refuse && (save_cert_sigalgs(e, ssl) != 0 || save_alpn(e, ssl) != 0)) {
      ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
      refuse = SSL_AD_INTERNAL_ERROR;
    }
    if (refuse) {
      *alert = refuse;
      return SSL_CLIENT_HELLO_ERROR;
    }
    e->hello_seen = 1;
  }
  if ((e->hello_task || e->sni_judge) && !e->hello_ready)
    return SSL_CLIENT_HELLO_RETRY; /* SSL_ERROR_WANT_CLIENT_HELLO_CB: TASK_HELLO */
  if (e->hello_alert) {
    *alert = e->hello_alert;
    return SSL_CLIENT_HELLO_ERROR;
  }
  return SSL_CLIENT_HELLO_SUCCESS;
}

static int alpn_cb(SSL *ssl, const unsigned char **out, unsigned char *outlen, const unsigned char *in,
                   unsigned int inlen, void *arg) {
  tb_engine *e = tb_engine_of(ssl);
  unsigned char *sel = NULL;
  unsigned char sel_len = 0;
  (void)arg;
  if (!e)
    return SSL_TLSEXT_ERR_NOACK;
  if (e->alpn_choice_len == 0)
    return SSL_TLSEXT_ERR_NOACK; /* a selector declined ALPN */
  if (e->alpn_choice_len > 0) {
    /* the selector's answer must be one the client offered */
    unsigned char one[257];
    one[0] = (unsigned char)e->alpn_choice_len;
    memcpy(one + 1, e->alpn_choice, (size_t)e->alpn_choice_len);
    if (SSL_select_next_proto(&sel, &sel_len, one, (unsigned)e->alpn_choice_len + 1, in, inlen) !=
        OPENSSL_NPN_NEGOTIATED)
      return SSL_TLSEXT_ERR_ALERT_FATAL;
    *out = e->alpn_choice;
    *outlen = (unsigned char)e->alpn_choice_len;
    return SSL_TLSEXT_ERR_OK;
  }
  if (e->alpn_choice_len == -2)
    return SSL_TLSEXT_ERR_ALERT_FATAL; /* a selector chose nothing the client offered */
  if (!e->alpn_accept)
    return SSL_TLSEXT_ERR_NOACK;
  /* the server's order wins, as in SunJSSE */
  if (SSL_select_next_proto(&sel, &sel_len, e->alpn_accept, (unsigned)e->alpn_accept_len, in, inlen) !=
      OPENSSL_NPN_NEGOTIATED)
    return SSL_TLSEXT_ERR_ALERT_FATAL; /* no_application_protocol */
  *out = sel;
  *outlen = sel_len;
  return SSL_TLSEXT_ERR_OK;
}

/* Staple the response that belongs to the certificate OpenSSL picked. */
static int status_cb(SSL *ssl, void *arg) {
  tb_engine *e = tb_engine_of(ssl);
  X509 *cert = SSL_get_certificate(ssl);
  int i;
  (void)arg;
  if (!e || !cert || !SSL_is_server(ssl))
    return SSL_TLSEXT_ERR_NOACK; /* clients read the response after the handshake */
  for (i = 0; i < e->n_offered; i++) {
    tb_keymat *k = e->offered[i];
    if (k->ocsp && X509_cmp(k->cert, cert) == 0) {
      unsigned char *copy = OPENSSL_memdup(k->ocsp, k->ocsp_len);
      if (copy && SSL_set_tlsext_status_ocsp_resp(ssl, copy, (long)k->ocsp_len))
        return SSL_TLSEXT_ERR_OK;
      OPENSSL_free(copy);
      return SSL_TLSEXT_ERR_NOACK;
    }
  }
  return SSL_TLSEXT_ERR_NOACK;
}

int tb_set_alpn(tb_engine *e, const unsigned char *wire, size_t len) {
  if (e->flags & TB_F_CLIENT)
    return SSL_set_alpn_protos(e->ssl, wire, (unsigned)len) == 0 ? 0 : -1;
  free(e->alpn_accept);
  e->alpn_accept = NULL;
  e->alpn_accept_len = 0;
  if (len == 0)
    return 0;
  e->alpn_accept = tb_malloc(len);
  if (!e->alpn_accept)
    return -1;
  memcpy(e->alpn_accept, wire, len);
  e->alpn_accept_len = len;
  return 0;
}

void tb_extensions_free(tb_engine *e) {
  int i;
  free(e->alpn_accept);
  e->alpn_accept = NULL;
  free(e->cert_sigalgs);
  e->cert_sigalgs = NULL;
  free(e->alpn_offer);
  e->alpn_offer = NULL;
  for (i = 0; i < e->n_offered; i++)
    tb_keymat_free(e->offered[i]);
  e->n_offered = 0;
}

void tb_install_extensions(SSL_CTX *ctx) {
  SSL_CTX_set_client_hello_cb(ctx, hello_cb, NULL);
  SSL_CTX_set_alpn_select_cb(ctx, alpn_cb, NULL);
  SSL_CTX_set_tlsext_status_cb(ctx, status_cb);
}
