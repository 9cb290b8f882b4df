#ifndef TB_JNI_UTIL_H
#define TB_JNI_UTIL_H
#include <jni.h>
#include "../core/tb.h"

#define TB_NATIVE_CLASS "org/tlsbridge/internal/Native"
#define TB_N(name, sig, fn) {(char *)(name), (char *)(sig), (void *)(fn)}

int tb_jni_util_init(JNIEnv *env);
void tb_jni_util_unload(JNIEnv *env);
/* Every OpenSSL or engine failure reaches Java through this one function. */
void tb_throw(JNIEnv *env, const tb_error *err);
void tb_throw_kind(JNIEnv *env, int kind, const char *msg);
/* Hands a context a file path chosen by the application (not the peer), and
 * throws what fn reports. */
void tb_ctx_path(JNIEnv *env, jlong ctx, jstring path, int (*fn)(SSL_CTX *, const char *, tb_error *));
/* Hands fn both cipher lists (NULL stays NULL) for a context or an engine,
 * and throws what it reports. Returns 0, or -1 with an exception pending. */
int tb_with_lists(JNIEnv *env, jstring l12, jstring l13,
                  int (*fn)(void *target, const char *l12, const char *l13, tb_error *err), void *target);
jobjectArray tb_der_chain(JNIEnv *env, X509 *leaf, STACK_OF(X509) *rest);
jbyteArray tb_bytes(JNIEnv *env, const void *p, size_t n);
jclass tb_byte_array_class(void);
jclass tb_string_class(void);
int tb_jni_engine_init(JNIEnv *env);

static inline void *tb_ptr(jlong h) { return (void *)(intptr_t)h; }
static inline jlong tb_handle(const void *p) { return (jlong)(intptr_t)p; }

#define TB_DECLARE_METHODS(group) \
  extern const JNINativeMethod tb_##group##_methods[]; \
  extern const int tb_##group##_count;
TB_DECLARE_METHODS(library)
TB_DECLARE_METHODS(constants)
TB_DECLARE_METHODS(context)
TB_DECLARE_METHODS(engine)
TB_DECLARE_METHODS(session)
TB_DECLARE_METHODS(extensions)
TB_DECLARE_METHODS(config)
TB_DECLARE_METHODS(socket)
TB_DECLARE_METHODS(groups)
#endif
