/*
 * Every number Java shares with C, by the name the C code uses, for the
 * loader's check (NativeConstants.java, NativeLibrary.java): a library whose
 * values differ from the Java classes' in any entry is refused at load,
 * naming the constant, instead of misreading results later.
 */
#include "jni_util.h"
#include "jni_wire.h"
#include "../core/socket.h"

#include <openssl/tls1.h>
#include <openssl/x509_vfy.h>

typedef struct constant {
  const char *name;
  int64_t value;
} constant;

#define TB_C(sym) {#sym, (int64_t)(sym)}

static const constant table[] = {
    /* SSLEngineResult.Status and HandshakeStatus codes (tb.h) */
    TB_C(TB_OK), TB_C(TB_UNDERFLOW), TB_C(TB_OVERFLOW), TB_C(TB_CLOSED),
    TB_C(TB_HS_NOT), TB_C(TB_HS_FINISHED), TB_C(TB_HS_NEED_TASK), TB_C(TB_HS_NEED_WRAP),
    TB_C(TB_HS_NEED_UNWRAP),
    /* delegated tasks (tb.h) */
    TB_C(TB_TASK_NONE), TB_C(TB_TASK_VERIFY), TB_C(TB_TASK_CERT), TB_C(TB_TASK_HELLO),
    /* packed results and state, arguments (jni_wire.h) */
    TB_C(TB_RES_LEN_BITS), TB_C(TB_RES_STATUS_SHIFT), TB_C(TB_RES_STATUS_MASK), TB_C(TB_RES_HS_SHIFT),
    TB_C(TB_RES_HS_MASK), TB_C(TB_RES_IDLE_SHIFT),
    TB_C(TB_ST_HS_MASK), TB_C(TB_ST_IN_DONE), TB_C(TB_ST_OUT_DONE), TB_C(TB_ST_HS_DONE), TB_C(TB_ST_FAILED),
    TB_C(TB_ST_STARTED), TB_C(TB_ST_TASK_SHIFT), TB_C(TB_ST_TASK_MASK), TB_C(TB_ST_PEER_CLOSED),
    TB_C(TB_ST_PHA),
    TB_C(TB_AUTH_NONE), TB_C(TB_AUTH_WANT), TB_C(TB_AUTH_NEED),
    TB_C(TB_EXT_HELLO_TASK), TB_C(TB_EXT_OCSP), TB_C(TB_EXT_CLIENT_FIRST),
    TB_C(TB_SF_REUSED), TB_C(TB_SF_PEER_CERT), TB_C(TB_SF_ORIGIN), TB_C(TB_SF_HEADER), TB_C(TB_SF_FIELDS),
    TB_C(TB_SF_AT_VERSION), TB_C(TB_SF_AT_SUITE), TB_C(TB_SF_AT_TIME), TB_C(TB_SF_AT_KEY), TB_C(TB_SF_AT_GROUP),
    TB_C(TB_SF_F_PROTOCOL), TB_C(TB_SF_F_SUITE), TB_C(TB_SF_F_ID), TB_C(TB_SF_F_ORIGIN), TB_C(TB_SF_F_GROUP),
    TB_C(TB_SF_F_SNI), TB_C(TB_SF_F_ALPN), TB_C(TB_SF_F_SCHEMES), TB_C(TB_SF_F_OCSP),
    /* buffer sizes the engine promises (tb.h) */
    TB_C(TB_MAX_PLAINTEXT), TB_C(TB_MAX_RECORD),
    /* socket option ids (socket.h) */
    TB_C(TB_SO_REUSEADDR), TB_C(TB_SO_NODELAY), TB_C(TB_SO_KEEPALIVE), TB_C(TB_SO_RCVBUF),
    TB_C(TB_SO_SNDBUF), TB_C(TB_SO_LINGER), TB_C(TB_SO_TCLASS), TB_C(TB_SOCK_TASK_BASE),
    TB_C(TB_SOCK_BLOCKED_READ), TB_C(TB_SOCK_BLOCKED_WRITE), TB_C(TB_WAIT_READ), TB_C(TB_WAIT_WRITE),
    /* OpenSSL's numbers that Java passes through */
    TB_C(TLS1_2_VERSION), TB_C(TLS1_3_VERSION),
    TB_C(SSL_OP_NO_TICKET), TB_C(SSL_OP_ENABLE_KTLS),
    TB_C(SSL_AD_UNRECOGNIZED_NAME), TB_C(SSL_AD_ILLEGAL_PARAMETER), TB_C(SSL_AD_INTERNAL_ERROR),
    TB_C(X509_V_ERR_UNSPECIFIED), TB_C(X509_V_ERR_CERT_NOT_YET_VALID), TB_C(X509_V_ERR_CERT_HAS_EXPIRED),
    TB_C(X509_V_ERR_CERT_REVOKED), TB_C(X509_V_ERR_CERT_UNTRUSTED),
};
#define TB_N_CONSTANTS ((jsize)(sizeof table / sizeof table[0]))

static jobjectArray constant_names(JNIEnv *env, jclass c) {
  jobjectArray a = (*env)->NewObjectArray(env, TB_N_CONSTANTS, tb_string_class(), NULL);
  for (jsize i = 0; a && i < TB_N_CONSTANTS; i++) {
    jstring s = (*env)->NewStringUTF(env, table[i].name); /* our own ASCII names */
    if (!s)
      return NULL;
    (*env)->SetObjectArrayElement(env, a, i, s);
    (*env)->DeleteLocalRef(env, s);
  }
  return a;
}

static jlongArray constant_values(JNIEnv *env, jclass c) {
  jlong v[TB_N_CONSTANTS];
  jlongArray a = (*env)->NewLongArray(env, TB_N_CONSTANTS);
  for (jsize i = 0; i < TB_N_CONSTANTS; i++)
    v[i] = (jlong)table[i].value;
  if (a)
    (*env)->SetLongArrayRegion(env, a, 0, TB_N_CONSTANTS, v);
  return a;
}

const JNINativeMethod tb_constants_methods[] = {
    TB_N("constantNames", "()[Ljava/lang/String;", constant_names),
    TB_N("constantValues", "()[J", constant_values),
};
const int tb_constants_count = sizeof tb_constants_methods / sizeof tb_constants_methods[0];
