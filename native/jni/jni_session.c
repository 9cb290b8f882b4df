/* What an SSLSession reports, read from the SSL once the handshake has got
 * far enough (Java snapshots it so a session outlives its engine), and the
 * client-side resumption cache that decides which session a client offers. */
#include "jni_util.h"
#include "jni_wire.h"
#include "../core/keys.h"
#include "../core/session_cache.h"
#include "../core/ticket_keys.h"

#include <string.h>
#include <openssl/x509v3.h>

/* SSLContext.init again: the new SSL_CTX keeps the previous one's sessions. */
static void ctx_share_sessions(JNIEnv *env, jclass c, jlong ctx, jlong prev) {
  tb_error err;
  ERR_clear_error();
  if (tb_ctx_share(tb_ptr(ctx), tb_ptr(prev)) != 0) {
    tb_err_from_openssl(&err, TB_ERR_MEMORY, "cannot keep the session caches across init");
    tb_throw(env, &err);
  }
}

static void ctx_ticket_keys(JNIEnv *env, jclass c, jlong ctx, jstring path) {
  tb_ctx_path(env, ctx, path, tb_ticket_keys_load);
}

static jboolean ctx_ticket_keys_refresh(JNIEnv *env, jclass c, jlong ctx) {
  tb_error err;
  int rc = tb_ticket_keys_refresh(tb_ptr(ctx), &err);
  if (rc < 0)
    tb_throw(env, &err);
  return rc == 1;
}

static jobjectArray peer_chain(JNIEnv *env, jclass c, jlong h) {
  tb_engine *e = tb_ptr(h);
  X509 *leaf = SSL_get0_peer_certificate(e->ssl);
  if (!leaf)
    return NULL;
  return tb_der_chain(env, leaf, SSL_get_peer_cert_chain(e->ssl));
}

static jobjectArray local_chain(JNIEnv *env, jclass c, jlong h) {
  tb_engine *e = tb_ptr(h);
  X509 *leaf = SSL_get_certificate(e->ssl);
  STACK_OF(X509) *chain = NULL;
  if (!leaf)
    return NULL;
  SSL_get0_chain_certs(e->ssl, &chain);
  return tb_der_chain(env, leaf, chain);
}

/* Scheme code point i of the peer's signature_algorithms (hash << 8 | sig)
 * or, cert set, of the signature_algorithms_cert the ClientHello carried. */
static jint scheme_at(tb_engine *e, int cert, int i) {
  unsigned char rsig = 0, rhash = 0;
  if (cert)
    return e->cert_sigalgs[i];
  SSL_get_sigalgs(e->ssl, i, NULL, NULL, NULL, &rsig, &rhash);
  return (jint)(((unsigned)rhash << 8) | rsig);
}

/* The whole list, however long the peer made it (up to 32,767 schemes),
 * copied in slices. */
static jintArray schemes(JNIEnv *env, tb_engine *e, int cert, int n) {
  jintArray arr = (*env)->NewIntArray(env, n);
  jint buf[256];
  int i, k;
  for (i = 0; arr && i < n; i += k) {
    for (k = 0; k < (int)(sizeof buf / sizeof buf[0]) && i + k < n; k++)
      buf[k] = scheme_at(e, cert, i + k);
    (*env)->SetIntArrayRegion(env, arr, i, k, buf);
  }
  return arr;
}

static jintArray peer_sigalgs(JNIEnv *env, jclass c, jlong h) {
  tb_engine *e = tb_ptr(h);
  int n = SSL_get_sigalgs(e->ssl, -1, NULL, NULL, NULL, NULL, NULL);
  return schemes(env, e, 0, n < 0 ? 0 : n);
}

static unsigned char *put_u16(unsigned char *p, unsigned v) {
  p[0] = (unsigned char)(v >> 8);
  p[1] = (unsigned char)v;
  return p + 2;
}

static unsigned char *put_u64(unsigned char *p, uint64_t v) {
  for (int i = 7; i >= 0; i--)
    *p++ = (unsigned char)(v >> (8 * i));
  return p;
}

/* lengths too: session_facts refuses a total above INT32_MAX first */
static unsigned char *put_u32(unsigned char *p, uint32_t v) {
  return put_u16(put_u16(p, v >> 16), v & 0xffff);
}

/* the header's values abut and end where the fields begin */
_Static_assert(TB_SF_AT_VERSION == 1 && TB_SF_AT_SUITE == TB_SF_AT_VERSION + 2 &&
                   TB_SF_AT_TIME == TB_SF_AT_SUITE + 2 && TB_SF_AT_KEY == TB_SF_AT_TIME + 8 &&
                   TB_SF_AT_GROUP == TB_SF_AT_KEY + 8 && TB_SF_HEADER == TB_SF_AT_GROUP + 4,
               "session facts header layout");

static unsigned char *put_field(unsigned char *p, const void *src, size_t n) {
  p = put_u32(p, (uint32_t)n);
  if (n)
    memcpy(p, src, n);
  return p + n;
}

/* Everything a session reports that OpenSSL knows at the end of (or during)
 * a handshake, in one crossing instead of one per value (layout: jni_wire.h).
 * The protocol, suite and group go as codes, and as names too only when
 * asked (Java keeps the names by code: a process meets a handful).
 * The SNI and ALPN are the peer's bytes as sent. The certificate scheme list
 * is signature_algorithms_cert when the peer sent it, else its
 * signature_algorithms; the SNI a server reports is the one its ClientHello
 * carried (OpenSSL answers from the session when TLS 1.2 resumes, which does
 * not keep the name). */
static jbyteArray session_facts(JNIEnv *env, jclass c, jlong h, jboolean names) {
  tb_engine *e = tb_ptr(h);
  SSL *ssl = e->ssl;
  const SSL_CIPHER *ci = SSL_get_current_cipher(ssl);
  SSL_SESSION *sess = SSL_get_session(ssl);
  const char *ver = SSL_get_version(ssl), *cname, *group, *sni = NULL;
  const unsigned char *id = NULL, *origin = NULL, *alpn = NULL, *ocsp = NULL;
  unsigned int id_len = 0, alpn_len = 0;
  size_t origin_len = 0, sni_len = 0, total;
  long ocsp_len;
  int nid = 0, cert = e->hello_seen && e->n_cert_sigalgs >= 0, n_schemes, flags = 0, cid = 0;
  unsigned char stack[1024], *buf, *p;
  struct field {
    const void *p;
    size_t n;
  } f[TB_SF_FIELDS];
  jbyteArray out;

  if (!ci)
    ci = SSL_get_pending_cipher(ssl);
  cname = ci ? SSL_CIPHER_standard_name(ci) : NULL;
  if (cname)
    cid = SSL_CIPHER_get_protocol_id(ci);
  else
    cname = "SSL_NULL_WITH_NULL_NULL";
  if (sess)
    id = SSL_SESSION_get_id(sess, &id_len);
  if (tb_session_origin(ssl, &origin, &origin_len))
    flags |= TB_SF_ORIGIN;
  else
    origin_len = 0;
  if (SSL_session_reused(ssl))
    flags |= TB_SF_REUSED;
  if (SSL_get0_peer_certificate(ssl))
    flags |= TB_SF_PEER_CERT;
  group = tb_negotiated_group(ssl, &nid);
  if (!(e->flags & TB_F_CLIENT) && e->hello_seen) {
    if (e->sni_len >= 0) {
      sni = (const char *)e->sni;
      sni_len = (size_t)e->sni_len;
    }
  } else if ((sni = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name)) != NULL) {
    sni_len = strlen(sni);
  }
  SSL_get0_alpn_selected(ssl, &alpn, &alpn_len);
  ocsp_len = SSL_get_tlsext_status_ocsp_resp(ssl, &ocsp);
  if (ocsp_len <= 0 || !ocsp)
    ocsp_len = 0;
  n_schemes = cert ? e->n_cert_sigalgs : SSL_get_sigalgs(ssl, -1, NULL, NULL, NULL, NULL, NULL);
  if (n_schemes < 0)
    n_schemes = 0;

  if (!names)
    ver = cname = group = "";
  total = TB_SF_HEADER + 4 * TB_SF_FIELDS + strlen(ver) + strlen(cname) + id_len + origin_len +
          (group ? strlen(group) : 0) + sni_len + alpn_len + 2 * (size_t)n_schemes + (size_t)ocsp_len;
  if (total > INT32_MAX) {
    tb_throw_kind(env, TB_ERR_MEMORY, "session facts too large");
    return NULL;
  }
  buf = total <= sizeof stack ? stack : OPENSSL_malloc(total);
  if (!buf) {
    tb_throw_kind(env, TB_ERR_MEMORY, "cannot read the session");
    return NULL;
  }
  buf[0] = (unsigned char)flags;
  put_u16(buf + TB_SF_AT_VERSION, (unsigned)SSL_version(ssl));
  put_u16(buf + TB_SF_AT_SUITE, (unsigned)cid);
  put_u64(buf + TB_SF_AT_TIME, sess ? (uint64_t)SSL_SESSION_get_time(sess) * 1000 : 0);
  put_u64(buf + TB_SF_AT_KEY, (uint64_t)tb_handle(tb_keymat_in_use(e)));
  put_u32(buf + TB_SF_AT_GROUP, (uint32_t)nid);
  f[TB_SF_F_PROTOCOL] = (struct field){ver, strlen(ver)};
  f[TB_SF_F_SUITE] = (struct field){cname, strlen(cname)};
  f[TB_SF_F_ID] = (struct field){id, id_len};
  f[TB_SF_F_ORIGIN] = (struct field){origin, origin_len};
  f[TB_SF_F_GROUP] = (struct field){group, group ? strlen(group) : 0};
  f[TB_SF_F_SNI] = (struct field){sni, sni_len};
  f[TB_SF_F_ALPN] = (struct field){alpn, alpn_len};
  f[TB_SF_F_SCHEMES] = (struct field){NULL, 2 * (size_t)n_schemes};
  f[TB_SF_F_OCSP] = (struct field){ocsp, (size_t)ocsp_len};
  p = buf + TB_SF_HEADER;
  for (int k = 0; k < TB_SF_FIELDS; k++) {
    if (k != TB_SF_F_SCHEMES) {
      p = put_field(p, f[k].p, f[k].n);
      continue;
    }
    p = put_u32(p, (uint32_t)f[k].n);
    for (int i = 0; i < n_schemes; i++)
      p = put_u16(p, (unsigned)scheme_at(e, cert, i));
  }
  out = tb_bytes(env, buf, (size_t)(p - buf));
  if (buf != stack)
    OPENSSL_free(buf);
  return out;
}

static jobjectArray client_ca_names(JNIEnv *env, jclass c, jlong h) {
  tb_engine *e = tb_ptr(h);
  const STACK_OF(X509_NAME) *sk = SSL_get0_peer_CA_list(e->ssl);
  int n = sk ? sk_X509_NAME_num(sk) : 0, i;
  jobjectArray arr;
  if (!sk)
    sk = SSL_get_client_CA_list(e->ssl);
  n = sk ? sk_X509_NAME_num(sk) : 0;
  arr = (*env)->NewObjectArray(env, n, tb_byte_array_class(), NULL);
  for (i = 0; arr && i < n; i++) {
    unsigned char *der = NULL;
    int len = i2d_X509_NAME(sk_X509_NAME_value(sk, i), &der);
    jbyteArray a;
    if (len <= 0) {
      ERR_clear_error(); /* the name is left out, its error with it */
      continue;
    }
    a = tb_bytes(env, der, (size_t)len);
    OPENSSL_free(der);
    if (!a)
      return NULL;
    (*env)->SetObjectArrayElement(env, arr, i, a);
    (*env)->DeleteLocalRef(env, a);
  }
  return arr;
}

/* RFC 6125 name checks by OpenSSL, for trust managers that do not check
 * identity themselves. 1 match, 0 mismatch, -1 malformed input. */
static jint check_host(JNIEnv *env, jclass c, jbyteArray der, jstring host, jboolean is_ip) {
  jsize len = (*env)->GetArrayLength(env, der);
  jbyte *p = (*env)->GetByteArrayElements(env, der, NULL);
  const char *h;
  const unsigned char *q;
  X509 *x;
  int rc;
  if (!p)
    return -1;
  q = (const unsigned char *)p;
  x = d2i_X509(NULL, &q, len);
  (*env)->ReleaseByteArrayElements(env, der, p, JNI_ABORT);
  if (!x) {
    ERR_clear_error(); /* -1 is the answer; nothing stays on the queue */
    return -1;
  }
  h = (*env)->GetStringUTFChars(env, host, NULL);
  if (!h) {
    X509_free(x);
    return -1;
  }
  if (is_ip)
    rc = X509_check_ip_asc(x, h, 0);
  else
    rc = X509_check_host(x, h, strlen(h), X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS, NULL);
  (*env)->ReleaseStringUTFChars(env, host, h);
  X509_free(x);
  if (rc < 0)
    ERR_clear_error();
  return rc == 1 ? 1 : rc == 0 ? 0 : -1;
}

static jboolean set_peer(JNIEnv *env, jclass c, jlong h, jstring key) {
  tb_engine *e = tb_ptr(h);
  const char *k = (*env)->GetStringUTFChars(env, key, NULL);
  int rc;
  if (!k)
    return JNI_FALSE;
  rc = tb_engine_set_peer(e, k);
  (*env)->ReleaseStringUTFChars(env, key, k);
  return rc == 1 ? JNI_TRUE : JNI_FALSE;
}

static void ctx_client_cache(JNIEnv *env, jclass c, jlong ctx, jint size, jint timeout) {
  if (tb_client_cache_attach(tb_ptr(ctx), (size_t)size, timeout) != 0)
    tb_throw_kind(env, TB_ERR_MEMORY, "cannot configure the client session cache");
}

/* Peer bytes cross as bytes: the token is copied, never pinned. */
static void ctx_forget_session(JNIEnv *env, jclass c, jlong ctx, jbyteArray origin) {
  unsigned char tok[64];
  jsize n = origin ? (*env)->GetArrayLength(env, origin) : 0;
  if (n <= 0 || n > (jsize)sizeof tok)
    return;
  (*env)->GetByteArrayRegion(env, origin, 0, n, (jbyte *)tok);
  tb_sessions_forget(tb_ptr(ctx), tok, (size_t)n);
}

const JNINativeMethod tb_session_methods[] = {
    TB_N("ctxShareSessions", "(JJ)V", ctx_share_sessions),
    TB_N("ctxTicketKeys", "(JLjava/lang/String;)V", ctx_ticket_keys),
    TB_N("ctxTicketKeysRefresh", "(J)Z", ctx_ticket_keys_refresh),
    TB_N("sessionFacts", "(JZ)[B", session_facts),
    TB_N("peerChain", "(J)[[B", peer_chain),
    TB_N("localChain", "(J)[[B", local_chain),
    TB_N("peerSigAlgs", "(J)[I", peer_sigalgs),
    TB_N("clientCaNames", "(J)[[B", client_ca_names),
    TB_N("checkHost", "([BLjava/lang/String;Z)I", check_host),
    TB_N("setPeer", "(JLjava/lang/String;)Z", set_peer),
    TB_N("ctxClientCache", "(JII)V", ctx_client_cache),
    TB_N("ctxForgetSession", "(J[B)V", ctx_forget_session),
};
const int tb_session_count = sizeof tb_session_methods / sizeof tb_session_methods[0];
