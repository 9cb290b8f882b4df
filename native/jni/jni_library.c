/* Build identity and OpenSSL version, for the loader's same-build check. */
#include "jni_util.h"

#include <openssl/crypto.h>

#ifndef TB_BUILD_ID
#error "TB_BUILD_ID must be defined by the build"
#endif
#define TB_STR2(x) #x
#define TB_STR(x) TB_STR2(x)

static jstring build_id(JNIEnv *env, jclass c) {
  return (*env)->NewStringUTF(env, TB_STR(TB_BUILD_ID));
}

static jstring openssl_version(JNIEnv *env, jclass c) {
  return (*env)->NewStringUTF(env, OpenSSL_version(OPENSSL_VERSION));
}

static jlong openssl_version_number(JNIEnv *env, jclass c) {
  return (jlong)OpenSSL_version_num();
}

const JNINativeMethod tb_library_methods[] = {
    TB_N("buildId", "()Ljava/lang/String;", build_id),
    TB_N("openSslVersion", "()Ljava/lang/String;", openssl_version),
    TB_N("openSslVersionNumber", "()J", openssl_version_number),
};
const int tb_library_count = sizeof tb_library_methods / sizeof tb_library_methods[0];
