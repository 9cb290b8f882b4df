/* Key-exchange groups for Java: which of the names Java maps this OpenSSL
 * implements (the group a handshake negotiated travels with the session's
 * other facts, jni_session.c). */
#include "jni_util.h"

/* One flag per OpenSSL group name (Java's own table, so plain strings). */
static jbooleanArray groups_supported(JNIEnv *env, jclass c, jobjectArray names) {
  jsize n = (*env)->GetArrayLength(env, names), i;
  jbooleanArray out = (*env)->NewBooleanArray(env, n);
  SSL_CTX *scratch;
  if (!out)
    return NULL;
  scratch = SSL_CTX_new(TLS_method());
  if (!scratch) {
    tb_error err;
    tb_err_from_openssl(&err, TB_ERR_MEMORY, "cannot list the key-exchange groups");
    tb_throw(env, &err);
    return NULL;
  }
  for (i = 0; i < n; i++) {
    jstring s = (jstring)(*env)->GetObjectArrayElement(env, names, i);
    const char *name = s ? (*env)->GetStringUTFChars(env, s, NULL) : NULL;
    jboolean ok;
    if (!name)
      break;
    ok = tb_group_supported(scratch, name) ? JNI_TRUE : JNI_FALSE;
    (*env)->ReleaseStringUTFChars(env, s, name);
    (*env)->DeleteLocalRef(env, s);
    (*env)->SetBooleanArrayRegion(env, out, i, 1, &ok);
  }
  SSL_CTX_free(scratch);
  return (*env)->ExceptionCheck(env) ? NULL : out;
}

const JNINativeMethod tb_groups_methods[] = {
    TB_N("groupsSupported", "([Ljava/lang/String;)[Z", groups_supported),
};
const int tb_groups_count = sizeof tb_groups_methods / sizeof tb_groups_methods[0];
