/* JNI for the TLS extensions a handshake settles (core/extensions.c): the
 * ClientHello shown to Java (server name, ALPN offer) and its answer, the
 * negotiated ALPN protocol, OCSP staples. */
#include "jni_util.h"
#include "jni_wire.h"
#include "../core/keys.h"

/* alpn: wire-format protocols (client offers / server accepts), or null.
 * flags: TB_EXT_* (jni_wire.h). */
static void configure_extensions(JNIEnv *env, jclass c, jlong h, jbyteArray alpn, jint flags) {
  tb_engine *e = tb_ptr(h);
  if (alpn) {
    jsize n = (*env)->GetArrayLength(env, alpn);
    unsigned char buf[1024];
    if (n > (jsize)sizeof buf) {
      tb_throw_kind(env, TB_ERR_ARGUMENT, "application protocol list too long");
      return;
    }
    (*env)->GetByteArrayRegion(env, alpn, 0, n, (jbyte *)buf);
    if (tb_set_alpn(e, buf, (size_t)n) != 0) {
      tb_throw_kind(env, TB_ERR_ARGUMENT, "cannot set application protocols");
      return;
    }
  }
  e->hello_task = (flags & TB_EXT_HELLO_TASK) && !(e->flags & TB_F_CLIENT);
  e->client_speaks_first = (flags & TB_EXT_CLIENT_FIRST) && !(e->flags & TB_F_CLIENT);
  if ((flags & TB_EXT_OCSP) && (e->flags & TB_F_CLIENT))
    SSL_set_tlsext_status_type(e->ssl, TLSEXT_STATUSTYPE_ocsp);
}

static jbyteArray hello_server_name(JNIEnv *env, jclass c, jlong h) {
  tb_engine *e = tb_ptr(h);
  return e->sni_len >= 0 ? tb_bytes(env, e->sni, (size_t)e->sni_len) : NULL;
}

static jbyteArray hello_alpn(JNIEnv *env, jclass c, jlong h) {
  tb_engine *e = tb_ptr(h);
  return e->alpn_offer_len ? tb_bytes(env, e->alpn_offer, e->alpn_offer_len) : NULL;
}

/* choice: the selector's protocol (null: no answer; empty: decline ALPN);
 * none: the selector chose nothing usable; alert: fatal alert to send. */
static void hello_answer(JNIEnv *env, jclass c, jlong h, jbyteArray choice, jboolean none, jint alert) {
  tb_engine *e = tb_ptr(h);
  e->hello_alert = alert;
  if (none) {
    e->alpn_choice_len = -2;
  } else if (choice) {
    jsize n = (*env)->GetArrayLength(env, choice);
    if (n > (jsize)sizeof e->alpn_choice)
      n = (jsize)sizeof e->alpn_choice;
    (*env)->GetByteArrayRegion(env, choice, 0, n, (jbyte *)e->alpn_choice);
    e->alpn_choice_len = n;
  }
}

/* The protocol's bytes: Java maps them ISO-8859-1, as SunJSSE does. */
static jbyteArray alpn_selected(JNIEnv *env, jclass c, jlong h) {
  tb_engine *e = tb_ptr(h);
  const unsigned char *p = NULL;
  unsigned int n = 0;
  SSL_get0_alpn_selected(e->ssl, &p, &n);
  return p && n > 0 ? tb_bytes(env, p, n) : NULL;
}

static void key_set_ocsp(JNIEnv *env, jclass c, jlong key, jbyteArray der) {
  jsize n = (*env)->GetArrayLength(env, der);
  jbyte *p = (*env)->GetByteArrayElements(env, der, NULL);
  int rc;
  if (!p)
    return;
  rc = tb_keymat_set_ocsp(tb_ptr(key), (const uint8_t *)p, (size_t)n);
  (*env)->ReleaseByteArrayElements(env, der, p, JNI_ABORT);
  if (rc != 0)
    tb_throw_kind(env, TB_ERR_MEMORY, "cannot keep the OCSP response");
}

const JNINativeMethod tb_extensions_methods[] = {
    TB_N("configureExtensions", "(J[BI)V", configure_extensions),
    TB_N("helloServerName", "(J)[B", hello_server_name),
    TB_N("helloAlpn", "(J)[B", hello_alpn),
    TB_N("helloAnswer", "(J[BZI)V", hello_answer),
    TB_N("alpnSelected", "(J)[B", alpn_selected),
    TB_N("keySetOcsp", "(J[B)V", key_set_ocsp),
};
const int tb_extensions_count = sizeof tb_extensions_methods / sizeof tb_extensions_methods[0];
