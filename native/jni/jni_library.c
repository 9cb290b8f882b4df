/* Build identity and OpenSSL version, for the loader's same-build check and
 * (linked-in OpenSSL) for tlsbridge-probe. */
#include "jni_util.h"
#include "../core/linked_openssl.h"
#include "../core/heap.h"
#include "../core/live.h"

#include <openssl/crypto.h>
#include <openssl/opensslv.h>

#ifndef TB_BUILD_ID
#error "TB_BUILD_ID must be defined by the build"
#endif
#define TB_STR2(x) #x
#define TB_STR(x) TB_STR2(x)

#ifdef TB_OPENSSL_PRIVATE
/* Read from the file by tlsbridge-probe, never by this code: the headers
 * compiled against are those of the OpenSSL linked in. */
__attribute__((used)) static const char linked_openssl[] = TB_LINKED_OPENSSL_TAG OPENSSL_VERSION_TEXT;
#endif

static jstring build_id(JNIEnv *env, jclass c) {
  return (*env)->NewStringUTF(env, TB_STR(TB_BUILD_ID));
}

static jstring openssl_version(JNIEnv *env, jclass c) {
  return (*env)->NewStringUTF(env, OpenSSL_version(OPENSSL_VERSION));
}

static jlong openssl_version_number(JNIEnv *env, jclass c) {
  return (jlong)OpenSSL_version_num();
}

/* Diagnostics for the soak test (tests/soak): Java cannot ask the C library
 * this without native code, and RSS alone cannot tell a native leak from
 * heap growth. */
static jlong malloc_in_use(JNIEnv *env, jclass c) {
  return (jlong)tb_heap_in_use();
}

/* Live native objects of one kind (core/live.h), for leak checks. */
static jlong live_objects(JNIEnv *env, jclass c, jint kind) {
  tb_live_init();
  return (jlong)tb_live_count(kind);
}

const JNINativeMethod tb_library_methods[] = {
    TB_N("buildId", "()Ljava/lang/String;", build_id),
    TB_N("openSslVersion", "()Ljava/lang/String;", openssl_version),
    TB_N("openSslVersionNumber", "()J", openssl_version_number),
    TB_N("mallocInUse", "()J", malloc_in_use),
    TB_N("liveObjects", "(I)J", live_objects),
};
const int tb_library_count = sizeof tb_library_methods / sizeof tb_library_methods[0];
