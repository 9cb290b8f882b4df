#include "jni_util.h"

#include <string.h>

static jclass cls_ssl, cls_handshake, cls_protocol, cls_iae, cls_ise, cls_io, cls_timeout,
    cls_oom, cls_bytes, cls_string, cls_socket, cls_connect, cls_bind;

static jclass global(JNIEnv *env, const char *name) {
  jclass local = (*env)->FindClass(env, name);
  jclass g;
  if (!local)
    return NULL;
  g = (*env)->NewGlobalRef(env, local);
  (*env)->DeleteLocalRef(env, local);
  return g;
}

int tb_jni_util_init(JNIEnv *env) {
  cls_ssl = global(env, "javax/net/ssl/SSLException");
  cls_handshake = global(env, "javax/net/ssl/SSLHandshakeException");
  cls_protocol = global(env, "javax/net/ssl/SSLProtocolException");
  cls_iae = global(env, "java/lang/IllegalArgumentException");
  cls_ise = global(env, "java/lang/IllegalStateException");
  cls_io = global(env, "java/io/IOException");
  cls_timeout = global(env, "java/net/SocketTimeoutException");
  cls_oom = global(env, "java/lang/OutOfMemoryError");
  cls_bytes = global(env, "[B");
  cls_string = global(env, "java/lang/String");
  cls_socket = global(env, "java/net/SocketException");
  cls_connect = global(env, "java/net/ConnectException");
  cls_bind = global(env, "java/net/BindException");
  return cls_ssl && cls_handshake && cls_protocol && cls_iae && cls_ise && cls_io && cls_timeout &&
                 cls_oom && cls_bytes && cls_string && cls_socket && cls_connect && cls_bind
             ? 0
             : -1;
}

void tb_jni_util_unload(JNIEnv *env) {
  jclass *all[] = {&cls_ssl, &cls_handshake, &cls_protocol, &cls_iae, &cls_ise,
                   &cls_io, &cls_timeout, &cls_oom, &cls_bytes, &cls_string,
                   &cls_socket, &cls_connect, &cls_bind};
  size_t i;
  for (i = 0; i < sizeof all / sizeof all[0]; i++) {
    if (*all[i])
      (*env)->DeleteGlobalRef(env, *all[i]);
    *all[i] = NULL;
  }
}

jclass tb_byte_array_class(void) { return cls_bytes; }
jclass tb_string_class(void) { return cls_string; }

void tb_throw_kind(JNIEnv *env, int kind, const char *msg) {
  jclass c;
  /* A call that fails leaves nothing on OpenSSL's error queue: the record
   * path of the bundled flavour counts on it (tb_err_reset_shared). Most
   * failures drained it into msg already; an early return may not have. */
  ERR_clear_error();
  if ((*env)->ExceptionCheck(env))
    return; /* the first exception is the true one */
  switch (kind) {
  case TB_ERR_HANDSHAKE: c = cls_handshake; break;
  case TB_ERR_PROTOCOL: c = cls_protocol; break;
  case TB_ERR_ARGUMENT: c = cls_iae; break;
  case TB_ERR_STATE: c = cls_ise; break;
  case TB_ERR_IO: c = cls_io; break;
  case TB_ERR_TIMEOUT: c = cls_timeout; break;
  case TB_ERR_MEMORY: c = cls_oom; break;
  case TB_ERR_SOCKET: c = cls_socket; break;
  case TB_ERR_CONNECT: c = cls_connect; break;
  case TB_ERR_BIND: c = cls_bind; break;
  default: c = cls_ssl; break;
  }
  (*env)->ThrowNew(env, c, msg && *msg ? msg : "TLS error");
}

void tb_throw(JNIEnv *env, const tb_error *err) {
  tb_throw_kind(env, err->kind == TB_ERR_NONE ? TB_ERR_SSL : err->kind, err->msg);
}

void tb_ctx_path(JNIEnv *env, jlong ctx, jstring path, int (*fn)(SSL_CTX *, const char *, tb_error *)) {
  tb_error err;
  const char *p = (*env)->GetStringUTFChars(env, path, NULL);
  int rc;
  if (!p)
    return;
  rc = fn(tb_ptr(ctx), p, &err);
  (*env)->ReleaseStringUTFChars(env, path, p);
  if (rc != 0)
    tb_throw(env, &err);
}

int tb_with_lists(JNIEnv *env, jstring l12, jstring l13,
                  int (*fn)(void *target, const char *l12, const char *l13, tb_error *err), void *target) {
  tb_error err;
  const char *a = l12 ? (*env)->GetStringUTFChars(env, l12, NULL) : NULL;
  const char *b = l13 && (a || !l12) ? (*env)->GetStringUTFChars(env, l13, NULL) : NULL;
  int rc = -1;
  tb_err_clear(&err);
  if ((!l12 || a) && (!l13 || b))
    rc = fn(target, a, b, &err) == 0 ? 0 : -2;
  if (a)
    (*env)->ReleaseStringUTFChars(env, l12, a);
  if (b)
    (*env)->ReleaseStringUTFChars(env, l13, b);
  if (rc == -2)
    tb_throw(env, &err);
  return rc == 0 ? 0 : -1;
}

jbyteArray tb_bytes(JNIEnv *env, const void *p, size_t n) {
  jbyteArray a = (*env)->NewByteArray(env, (jsize)n);
  if (a && n)
    (*env)->SetByteArrayRegion(env, a, 0, (jsize)n, (const jbyte *)p);
  return a;
}

static jbyteArray cert_der(JNIEnv *env, X509 *x) {
  unsigned char *der = NULL;
  int len = i2d_X509(x, &der);
  jbyteArray a;
  if (len <= 0) {
    tb_throw_kind(env, TB_ERR_SSL, "cannot encode a certificate");
    return NULL;
  }
  a = tb_bytes(env, der, (size_t)len);
  OPENSSL_free(der);
  return a;
}

/* leaf first, then rest without repeating the leaf (client-side chains from
 * OpenSSL include it, server-side ones do not). */
jobjectArray tb_der_chain(JNIEnv *env, X509 *leaf, STACK_OF(X509) *rest) {
  int n = 0, i, k = 0, total = rest ? sk_X509_num(rest) : 0;
  jobjectArray arr;
  if (leaf)
    n++;
  for (i = 0; i < total; i++)
    if (!leaf || X509_cmp(sk_X509_value(rest, i), leaf) != 0)
      n++;
  arr = (*env)->NewObjectArray(env, n, cls_bytes, NULL);
  if (!arr)
    return NULL;
  if (leaf) {
    jbyteArray d = cert_der(env, leaf);
    if (!d)
      return NULL;
    (*env)->SetObjectArrayElement(env, arr, k++, d);
    (*env)->DeleteLocalRef(env, d);
  }
  for (i = 0; i < total; i++) {
    X509 *c = sk_X509_value(rest, i);
    jbyteArray d;
    if (leaf && X509_cmp(c, leaf) == 0)
      continue;
    d = cert_der(env, c);
    if (!d)
      return NULL;
    (*env)->SetObjectArrayElement(env, arr, k++, d);
    (*env)->DeleteLocalRef(env, d);
  }
  return arr;
}
