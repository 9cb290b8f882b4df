/* Configuration inputs resolved by OpenSSL for Java integrations (Tomcat's
 * SSLHostConfig): PEM key and certificate files, OpenSSL cipher strings. */
#include "jni_util.h"
#include "../core/cipher_spec.h"
#include "../core/pem.h"

#include <string.h>

/* A Java byte[] as a NUL-terminated C string,
 * wiped on release; NULL array gives NULL. *fail is set on an exception. */
static char *secret_string(JNIEnv *env, jbyteArray a, int *fail) {
  jsize n;
  char *s;
  *fail = 0;
  if (!a)
    return NULL;
  n = (*env)->GetArrayLength(env, a);
  s = OPENSSL_zalloc((size_t)n + 1);
  if (!s) {
    tb_throw_kind(env, TB_ERR_MEMORY, "out of memory");
    *fail = 1;
    return NULL;
  }
  (*env)->GetByteArrayRegion(env, a, 0, n, (jbyte *)s);
  if ((*env)->ExceptionCheck(env)) {
    OPENSSL_free(s);
    *fail = 1;
    return NULL;
  }
  if (memchr(s, 0, (size_t)n)) {
    OPENSSL_clear_free(s, (size_t)n + 1);
    tb_throw_kind(env, TB_ERR_ARGUMENT, "password contains a NUL character");
    *fail = 1;
    return NULL;
  }
  return s;
}

static jbyteArray pem_key(JNIEnv *env, jclass c, jstring path, jbyteArray password, jstring password_name) {
  tb_error err;
  const char *p, *name = NULL;
  char *pw;
  uint8_t *der = NULL;
  size_t len = 0;
  int fail, rc;
  jbyteArray out = NULL;
  if (!path) {
    tb_throw_kind(env, TB_ERR_ARGUMENT, "key file path is null");
    return NULL;
  }
  pw = secret_string(env, password, &fail);
  if (fail)
    return NULL;
  p = (*env)->GetStringUTFChars(env, path, NULL);
  if (!p) {
    if (pw)
      OPENSSL_clear_free(pw, strlen(pw) + 1);
    return NULL;
  }
  if (password_name && !(name = (*env)->GetStringUTFChars(env, password_name, NULL))) {
    (*env)->ReleaseStringUTFChars(env, path, p);
    if (pw)
      OPENSSL_clear_free(pw, strlen(pw) + 1);
    return NULL;
  }
  tb_err_clear(&err);
  rc = tb_pem_read_key(p, pw, name, &der, &len, &err);
  (*env)->ReleaseStringUTFChars(env, path, p);
  if (name)
    (*env)->ReleaseStringUTFChars(env, password_name, name);
  if (pw)
    OPENSSL_clear_free(pw, strlen(pw) + 1);
  if (rc < 0) {
    tb_throw(env, &err);
    return NULL;
  }
  out = tb_bytes(env, der, len);
  tb_pem_key_free(der, len);
  return out;
}

static jobjectArray pem_certs(JNIEnv *env, jclass c, jstring path) {
  tb_error err;
  tb_der_list list;
  const char *p;
  jobjectArray out;
  int i, rc;
  if (!path) {
    tb_throw_kind(env, TB_ERR_ARGUMENT, "certificate file path is null");
    return NULL;
  }
  p = (*env)->GetStringUTFChars(env, path, NULL);
  if (!p)
    return NULL;
  tb_err_clear(&err);
  rc = tb_pem_read_certs(p, &list, &err);
  (*env)->ReleaseStringUTFChars(env, path, p);
  if (rc < 0) {
    tb_throw(env, &err);
    return NULL;
  }
  out = (*env)->NewObjectArray(env, list.n, tb_byte_array_class(), NULL);
  for (i = 0; out && i < list.n; i++) {
    jbyteArray d = tb_bytes(env, list.der[i], list.len[i]);
    if (!d) {
      out = NULL;
      break;
    }
    (*env)->SetObjectArrayElement(env, out, i, d);
    (*env)->DeleteLocalRef(env, d);
  }
  tb_der_list_free(&list);
  return out;
}

struct names {
  JNIEnv *env;
  jobjectArray out; /* NULL while counting */
  jsize n;
  int failed;
};

static void add_name(void *arg, const char *std) {
  struct names *a = arg;
  jstring s;
  if (a->out && !a->failed) {
    s = (*a->env)->NewStringUTF(a->env, std);
    if (!s) {
      a->failed = 1;
      return;
    }
    (*a->env)->SetObjectArrayElement(a->env, a->out, a->n, s);
    (*a->env)->DeleteLocalRef(a->env, s);
  }
  a->n++;
}

static jobjectArray cipher_expand(JNIEnv *env, jclass c, jstring spec) {
  tb_error err;
  struct names acc = {env, NULL, 0, 0};
  const char *s;
  int rc;
  if (!spec) {
    tb_throw_kind(env, TB_ERR_ARGUMENT, "cipher string is null");
    return NULL;
  }
  s = (*env)->GetStringUTFChars(env, spec, NULL);
  if (!s)
    return NULL;
  tb_err_clear(&err);
  /* twice: count, then fill (a temporary SSL_CTX is cheap next to Tomcat's startup) */
  rc = tb_cipher_spec_expand(s, add_name, &acc, &err);
  if (rc >= 0) {
    acc.out = (*env)->NewObjectArray(env, acc.n, tb_string_class(), NULL);
    acc.n = 0;
    if (acc.out)
      rc = tb_cipher_spec_expand(s, add_name, &acc, &err);
  }
  (*env)->ReleaseStringUTFChars(env, spec, s);
  if (rc < 0) {
    tb_throw(env, &err);
    return NULL;
  }
  return acc.failed || (*env)->ExceptionCheck(env) ? NULL : acc.out;
}

const JNINativeMethod tb_config_methods[] = {
    TB_N("pemKey", "(Ljava/lang/String;[BLjava/lang/String;)[B", pem_key),
    TB_N("pemCertificates", "(Ljava/lang/String;)[[B", pem_certs),
    TB_N("cipherExpand", "(Ljava/lang/String;)[Ljava/lang/String;", cipher_expand),
};
const int tb_config_count = sizeof tb_config_methods / sizeof tb_config_methods[0];
