/* Loads a JNI library as a JVM does (dlopen, every symbol bound now), finds
 * a symbol in it and, for JNI_OnLoad, calls it with a JavaVM that has no
 * JNIEnv to give: the library's own code then runs on this process's C
 * library and must answer JNI_ERR. tests/packaging/musl.sh builds it as a
 * dynamically linked musl program and runs it under musl's loader.
 *   musl_dlopen LIBRARY SYMBOL   exit 0: loaded and found (and JNI_ERR) */
#include <dlfcn.h>
#include <jni.h>
#include <stdio.h>
#include <string.h>

static jint JNICALL no_env(JavaVM *vm, void **env, jint version) {
  (void)vm;
  (void)version;
  *env = NULL;
  return JNI_EVERSION;
}

int main(int argc, char **argv) {
  struct JNIInvokeInterface_ functions;
  JavaVM vm = &functions;
  void *lib, *sym;
  jint rc;
  if (argc != 3) {
    fprintf(stderr, "usage: %s LIBRARY SYMBOL\n", argv[0]);
    return 2;
  }
  lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    printf("dlopen %s: %s\n", argv[1], dlerror());
    return 1;
  }
  sym = dlsym(lib, argv[2]);
  if (!sym) {
    printf("dlsym %s: %s\n", argv[2], dlerror());
    return 1;
  }
  if (strcmp(argv[2], "JNI_OnLoad") == 0) {
    memset(&functions, 0, sizeof functions);
    functions.GetEnv = no_env;
    rc = ((jint(JNICALL *)(JavaVM *, void *))sym)(&vm, NULL);
    if (rc != JNI_ERR) {
      printf("JNI_OnLoad without a JNIEnv answered %d, not JNI_ERR\n", (int)rc);
      return 1;
    }
    printf("%s: %s found, and answers JNI_ERR without a JNIEnv\n", argv[1], argv[2]);
    return 0;
  }
  printf("%s: %s found\n", argv[1], argv[2]);
  return 0;
}
