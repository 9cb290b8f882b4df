/* SSL_CTX lifetime and settings (options, key log), the cipher-suite
 * catalogue and key material. */
#include "jni_util.h"
#include "tb_alloc.h"
#include "../core/ciphers.h"
#include "../core/keylog.h"
#include "../core/keys.h"
#include "../core/session_cache.h"

#include <stdlib.h>
#include <string.h>

static jlong ctx_new(JNIEnv *env, jclass c) {
  tb_error err;
  SSL_CTX *ctx;
  tb_err_clear(&err);
  ctx = tb_ctx_new(&err);
  if (!ctx)
    tb_throw(env, &err);
  return tb_handle(ctx);
}

static void ctx_free(JNIEnv *env, jclass c, jlong h) {
  tb_ctx_free(tb_ptr(h));
}

/* The CA names a server sends in CertificateRequest: the issuers its
 * TrustManager accepts, as SunJSSE sends them. Set once, before use. */
static void ctx_client_ca_names(JNIEnv *env, jclass c, jlong h, jobjectArray names) {
  SSL_CTX *ctx = tb_ptr(h);
  STACK_OF(X509_NAME) *sk = sk_X509_NAME_new_null();
  jsize i, n = names ? (*env)->GetArrayLength(env, names) : 0;
  if (!sk) {
    tb_throw_kind(env, TB_ERR_MEMORY, "out of memory");
    return;
  }
  for (i = 0; i < n; i++) {
    jbyteArray a = (*env)->GetObjectArrayElement(env, names, i);
    jsize len;
    jbyte *p;
    const unsigned char *q;
    X509_NAME *name;
    if (!a)
      continue;
    len = (*env)->GetArrayLength(env, a);
    p = (*env)->GetByteArrayElements(env, a, NULL);
    if (!p) {
      sk_X509_NAME_pop_free(sk, X509_NAME_free);
      return;
    }
    q = (const unsigned char *)p;
    name = d2i_X509_NAME(NULL, &q, len);
    (*env)->ReleaseByteArrayElements(env, a, p, JNI_ABORT);
    (*env)->DeleteLocalRef(env, a);
    if (name && sk_X509_NAME_push(sk, name) <= 0)
      X509_NAME_free(name);
  }
  ERR_clear_error(); /* a name that does not parse is skipped, its errors with it */
  SSL_CTX_set_client_CA_list(ctx, sk); /* takes ownership */
}

/* The server cache's limits: kept in tlsbridge's own cache, under its lock,
 * so changing them never writes the live SSL_CTX. */
static void ctx_session_cache(JNIEnv *env, jclass c, jlong h, jint size, jint timeout_s) {
  if (tb_server_cache_limits(tb_ptr(h), (size_t)size, timeout_s) != 0)
    tb_throw_kind(env, TB_ERR_MEMORY, "cannot configure the server session cache");
}

/* SSL_OP_* bits for every SSL made from this context afterwards (set once,
 * at configuration time, never from a connection). Returns the new options. */
static jlong ctx_options(JNIEnv *env, jclass c, jlong h, jlong set, jlong clear) {
  SSL_CTX *ctx = tb_ptr(h);
  SSL_CTX_clear_options(ctx, (uint64_t)clear);
  return (jlong)SSL_CTX_set_options(ctx, (uint64_t)set);
}

static int ctx_lists(void *target, const char *l12, const char *l13, tb_error *err) {
  return tb_ctx_ciphers(target, l12, l13, err);
}

/* The suites every SSL of this context inherits; set at init only. */
static void ctx_ciphers(JNIEnv *env, jclass c, jlong h, jstring l12, jstring l13) {
  tb_with_lists(env, l12, l13, ctx_lists, tb_ptr(h));
}

struct cipher_acc {
  JNIEnv *env;
  jobjectArray out;
  jsize i;
};

static void add_cipher(void *arg, const char *std, const char *ossl, int tls13) {
  struct cipher_acc *a = arg;
  JNIEnv *env = a->env;
  const char *vals[3];
  int k;
  vals[0] = std;
  vals[1] = ossl;
  vals[2] = tls13 ? "13" : "12";
  if (!a->out || (*env)->ExceptionCheck(env))
    return;
  for (k = 0; k < 3; k++) {
    jstring s = (*env)->NewStringUTF(env, vals[k]);
    if (!s)
      return;
    (*env)->SetObjectArrayElement(env, a->out, a->i++, s);
    (*env)->DeleteLocalRef(env, s);
  }
}

static void count_cipher(void *arg, const char *std, const char *ossl, int tls13) {
  (*(int *)arg)++;
}

static jobjectArray ciphers(JNIEnv *env, jclass c) {
  tb_error err;
  struct cipher_acc acc;
  int n = 0;
  tb_err_clear(&err);
  if (tb_ciphers_each(count_cipher, &n, &err) < 0) {
    tb_throw(env, &err);
    return NULL;
  }
  acc.env = env;
  acc.i = 0;
  acc.out = (*env)->NewObjectArray(env, n * 3, tb_string_class(), NULL);
  if (!acc.out)
    return NULL;
  if (tb_ciphers_each(add_cipher, &acc, &err) < 0) {
    tb_throw(env, &err);
    return NULL;
  }
  return (*env)->ExceptionCheck(env) ? NULL : acc.out;
}

/* Standard names of the suites a context enables by default. */
static jobjectArray ctx_cipher_names(JNIEnv *env, jclass c, jlong h) {
  STACK_OF(SSL_CIPHER) *sk = SSL_CTX_get_ciphers(tb_ptr(h));
  int n = sk ? sk_SSL_CIPHER_num(sk) : 0, i, k = 0;
  jobjectArray out = (*env)->NewObjectArray(env, n, tb_string_class(), NULL);
  for (i = 0; out && i < n; i++) {
    const char *std = SSL_CIPHER_standard_name(sk_SSL_CIPHER_value(sk, i));
    jstring s;
    if (!std)
      continue;
    s = (*env)->NewStringUTF(env, std);
    if (!s)
      return NULL;
    (*env)->SetObjectArrayElement(env, out, k++, s);
    (*env)->DeleteLocalRef(env, s);
  }
  return out;
}

static jlong key_new(JNIEnv *env, jclass c, jbyteArray pkcs8, jobjectArray chain) {
  tb_error err;
  tb_keymat *k = NULL;
  jsize n = chain ? (*env)->GetArrayLength(env, chain) : 0, i, got = 0;
  jbyteArray *arrs = NULL;
  jbyte **bytes = NULL;
  const uint8_t **certs = NULL;
  size_t *lens = NULL;
  jbyte *key = NULL;
  jsize keylen;
  tb_err_clear(&err);
  if (!pkcs8 || n < 1) {
    tb_throw_kind(env, TB_ERR_ARGUMENT, "key and certificate chain are required");
    return 0;
  }
  arrs = tb_calloc((size_t)n, sizeof *arrs);
  bytes = tb_calloc((size_t)n, sizeof *bytes);
  certs = tb_calloc((size_t)n, sizeof *certs);
  lens = tb_calloc((size_t)n, sizeof *lens);
  if (!arrs || !bytes || !certs || !lens) {
    tb_throw_kind(env, TB_ERR_MEMORY, "out of memory");
    goto out;
  }
  for (i = 0; i < n; i++, got++) {
    arrs[i] = (*env)->GetObjectArrayElement(env, chain, i);
    if (!arrs[i]) {
      tb_throw_kind(env, TB_ERR_ARGUMENT, "null certificate in chain");
      goto out;
    }
    bytes[i] = (*env)->GetByteArrayElements(env, arrs[i], NULL);
    if (!bytes[i])
      goto out;
    certs[i] = (const uint8_t *)bytes[i];
    lens[i] = (size_t)(*env)->GetArrayLength(env, arrs[i]);
  }
  keylen = (*env)->GetArrayLength(env, pkcs8);
  key = (*env)->GetByteArrayElements(env, pkcs8, NULL);
  if (!key)
    goto out;
  k = tb_keymat_from_der((const uint8_t *)key, (size_t)keylen, certs, lens, n, &err);
  /* the Java array is wiped by the caller; the pinned copy is wiped here */
  OPENSSL_cleanse(key, (size_t)keylen);
  (*env)->ReleaseByteArrayElements(env, pkcs8, key, 0);
  if (!k)
    tb_throw(env, &err);
out:
  for (i = 0; i < got; i++) {
    if (bytes && bytes[i])
      (*env)->ReleaseByteArrayElements(env, arrs[i], bytes[i], JNI_ABORT);
    if (arrs && arrs[i])
      (*env)->DeleteLocalRef(env, arrs[i]);
  }
  free(arrs);
  free(bytes);
  free(certs);
  free(lens);
  return tb_handle(k);
}

static void key_free(JNIEnv *env, jclass c, jlong h) {
  tb_keymat_free(tb_ptr(h));
}

static jstring key_type(JNIEnv *env, jclass c, jlong h) {
  return (*env)->NewStringUTF(env, tb_keymat_type(tb_ptr(h)));
}

static void ctx_keylog(JNIEnv *env, jclass c, jlong ctx, jstring path) {
  tb_ctx_path(env, ctx, path, tb_keylog_attach);
}

const JNINativeMethod tb_context_methods[] = {
    TB_N("ctxNew", "()J", ctx_new),
    TB_N("ctxFree", "(J)V", ctx_free),
    TB_N("ctxClientCaNames", "(J[[B)V", ctx_client_ca_names),
    TB_N("ctxSessionCache", "(JII)V", ctx_session_cache),
    TB_N("ctxOptions", "(JJJ)J", ctx_options),
    TB_N("ctxKeylog", "(JLjava/lang/String;)V", ctx_keylog),
    TB_N("ciphers", "()[Ljava/lang/String;", ciphers),
    TB_N("ctxCipherNames", "(J)[Ljava/lang/String;", ctx_cipher_names),
    TB_N("ctxCiphers", "(JLjava/lang/String;Ljava/lang/String;)V", ctx_ciphers),
    TB_N("keyNew", "([B[[B)J", key_new),
    TB_N("keyFree", "(J)V", key_free),
    TB_N("keyType", "(J)Ljava/lang/String;", key_type),
};
const int tb_context_count = sizeof tb_context_methods / sizeof tb_context_methods[0];
