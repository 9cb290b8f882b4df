/* What an SSLSession reports, read from the SSL once the handshake has got
 * far enough (Java snapshots it so a session outlives its engine), and the
 * client-side resumption cache that decides which session a client offers. */
#include "jni_util.h"
#include "../core/keys.h"
#include "../core/session_cache.h"
#include "../core/ticket_keys.h"

#include <string.h>
#include <openssl/x509v3.h>

static jstring protocol(JNIEnv *env, jclass c, jlong h) {
  tb_engine *e = tb_ptr(h);
  return (*env)->NewStringUTF(env, SSL_get_version(e->ssl));
}

static jstring cipher(JNIEnv *env, jclass c, jlong h) {
  tb_engine *e = tb_ptr(h);
  const SSL_CIPHER *ci = SSL_get_current_cipher(e->ssl);
  const char *n = ci ? SSL_CIPHER_standard_name(ci) : NULL;
  if (!ci)
    ci = SSL_get_pending_cipher(e->ssl);
  if (!n && ci)
    n = SSL_CIPHER_standard_name(ci);
  return (*env)->NewStringUTF(env, n ? n : "SSL_NULL_WITH_NULL_NULL");
}

static jbyteArray session_id(JNIEnv *env, jclass c, jlong h) {
  tb_engine *e = tb_ptr(h);
  SSL_SESSION *s = SSL_get_session(e->ssl);
  unsigned int len = 0;
  const unsigned char *id = s ? SSL_SESSION_get_id(s, &len) : NULL;
  return tb_bytes(env, id, id ? len : 0);
}

static jlong session_time(JNIEnv *env, jclass c, jlong h) {
  tb_engine *e = tb_ptr(h);
  SSL_SESSION *s = SSL_get_session(e->ssl);
  return s ? (jlong)SSL_SESSION_get_time(s) * 1000 : 0;
}

static jboolean reused(JNIEnv *env, jclass c, jlong h) {
  tb_engine *e = tb_ptr(h);
  return SSL_session_reused(e->ssl) ? JNI_TRUE : JNI_FALSE;
}

/* The token shared by a session and every resumption of it, or null. */
static jbyteArray session_origin(JNIEnv *env, jclass c, jlong h) {
  tb_engine *e = tb_ptr(h);
  const unsigned char *tok;
  size_t n;
  return tb_session_origin(e->ssl, &tok, &n) ? tb_bytes(env, tok, n) : NULL;
}

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

/* The handle of the KeyMaterial whose chain this handshake sent, or 0: the
 * session then shows the application's own X509Certificate objects without
 * the chain being encoded and compared on every handshake. */
static jlong local_key(JNIEnv *env, jclass c, jlong h) {
  return tb_handle(tb_keymat_in_use(tb_ptr(h)));
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

/* What the peer accepts in certificate chains: signature_algorithms_cert
 * when it sent one, else its signature_algorithms. */
static jintArray peer_cert_sigalgs(JNIEnv *env, jclass c, jlong h) {
  tb_engine *e = tb_ptr(h);
  if (!e->hello_seen || e->n_cert_sigalgs < 0)
    return peer_sigalgs(env, c, h);
  return schemes(env, e, 1, e->n_cert_sigalgs);
}

/* A server reports what the client asked for in this handshake (kept from
 * the ClientHello: OpenSSL answers from the session when TLS 1.2 resumes,
 * which does not carry the name). Bytes as sent: Java builds
 * SNIHostName(byte[]) from them. */
static jbyteArray server_name(JNIEnv *env, jclass c, jlong h) {
  tb_engine *e = tb_ptr(h);
  const char *n;
  if (!(e->flags & TB_F_CLIENT) && e->hello_seen)
    return e->sni_len >= 0 ? tb_bytes(env, e->sni, (size_t)e->sni_len) : NULL;
  n = SSL_get_servername(e->ssl, TLSEXT_NAMETYPE_host_name);
  return n ? tb_bytes(env, n, strlen(n)) : NULL;
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
    if (len <= 0)
      continue;
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
  if (!x)
    return -1;
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

const JNINativeMethod tb_session_methods[] = {
    TB_N("protocol", "(J)Ljava/lang/String;", protocol),
    TB_N("cipher", "(J)Ljava/lang/String;", cipher),
    TB_N("sessionId", "(J)[B", session_id),
    TB_N("sessionTime", "(J)J", session_time),
    TB_N("reused", "(J)Z", reused),
    TB_N("sessionOrigin", "(J)[B", session_origin),
    TB_N("ctxShareSessions", "(JJ)V", ctx_share_sessions),
    TB_N("ctxTicketKeys", "(JLjava/lang/String;)V", ctx_ticket_keys),
    TB_N("ctxTicketKeysRefresh", "(J)Z", ctx_ticket_keys_refresh),
    TB_N("peerChain", "(J)[[B", peer_chain),
    TB_N("localChain", "(J)[[B", local_chain),
    TB_N("localKey", "(J)J", local_key),
    TB_N("peerSigAlgs", "(J)[I", peer_sigalgs),
    TB_N("peerCertSigAlgs", "(J)[I", peer_cert_sigalgs),
    TB_N("serverName", "(J)[B", server_name),
    TB_N("clientCaNames", "(J)[[B", client_ca_names),
    TB_N("checkHost", "([BLjava/lang/String;Z)I", check_host),
    TB_N("setPeer", "(JLjava/lang/String;)Z", set_peer),
    TB_N("ctxClientCache", "(JII)V", ctx_client_cache),
};
const int tb_session_count = sizeof tb_session_methods / sizeof tb_session_methods[0];
