/* The one registration table: every native method of
 * org.tlsbridge.internal.Native is bound here at load time, so a missing or
 * mistyped method fails System.load instead of a later call. */
#include "jni_util.h"

static int register_group(JNIEnv *env, jclass c, const JNINativeMethod *m, int n) {
  return (*env)->RegisterNatives(env, c, m, n) == 0 ? 0 : -1;
}

TB_API JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM *vm, void *reserved) {
  JNIEnv *env;
  jclass c;
  (void)reserved;
  if ((*vm)->GetEnv(vm, (void **)&env, JNI_VERSION_1_8) != JNI_OK)
    return JNI_ERR;
  if (tb_jni_util_init(env) != 0 || tb_jni_engine_init(env) != 0)
    return JNI_ERR;
  c = (*env)->FindClass(env, TB_NATIVE_CLASS);
  if (!c)
    return JNI_ERR;
  if (register_group(env, c, tb_library_methods, tb_library_count) ||
      register_group(env, c, tb_constants_methods, tb_constants_count) ||
      register_group(env, c, tb_context_methods, tb_context_count) ||
      register_group(env, c, tb_engine_methods, tb_engine_count) ||
      register_group(env, c, tb_session_methods, tb_session_count) ||
      register_group(env, c, tb_extensions_methods, tb_extensions_count) ||
      register_group(env, c, tb_config_methods, tb_config_count) ||
      register_group(env, c, tb_socket_methods, tb_socket_count) ||
      register_group(env, c, tb_groups_methods, tb_groups_count))
    return JNI_ERR;
  (*env)->DeleteLocalRef(env, c);
  if (!tb_bio_init() || tb_engine_ex_index() < 0)
    return JNI_ERR;
  return JNI_VERSION_1_8;
}

TB_API JNIEXPORT void JNICALL JNI_OnUnload(JavaVM *vm, void *reserved) {
  JNIEnv *env;
  (void)reserved;
  if ((*vm)->GetEnv(vm, (void **)&env, JNI_VERSION_1_8) == JNI_OK)
    tb_jni_util_unload(env);
}
