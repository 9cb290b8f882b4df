/* How tlsbridge-probe learns which OpenSSL a library with OpenSSL linked
 * inside (the bundled flavour) carries. No libcrypto is mapped to read the
 * version from, so such a library holds this tag followed by
 * OPENSSL_VERSION_TEXT in its read-only data (jni_library.c), and the probe
 * finds it in the mapped file (native/probe/procfs.c). */
#ifndef TB_LINKED_OPENSSL_H
#define TB_LINKED_OPENSSL_H
#define TB_LINKED_OPENSSL_TAG "tlsbridge linked OpenSSL: "
#endif
