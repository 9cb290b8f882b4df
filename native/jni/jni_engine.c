/* The engine's JNI face: one crossing per wrap/unwrap, buffers resolved in
 * place (direct address or a pinned array), status and counts packed into
 * the return value so nothing is allocated. */
#include "jni_util.h"
#include "jni_wire.h"
#include "../core/ciphers.h"
#include "../core/keys.h"

#include <string.h>
#include <openssl/err.h>

#define TB_LEN_MASK ((1ULL << TB_RES_LEN_BITS) - 1)

/* The layout is in jni_wire.h; Java decodes it in Results.java. */
static jlong pack(const tb_result *r) {
  return (jlong)(((uint64_t)r->consumed & TB_LEN_MASK) |
                 (((uint64_t)r->produced & TB_LEN_MASK) << TB_RES_LEN_BITS) |
                 ((uint64_t)(r->status & TB_RES_STATUS_MASK) << TB_RES_STATUS_SHIFT) |
                 ((uint64_t)(r->hs & TB_RES_HS_MASK) << TB_RES_HS_SHIFT) |
                 ((uint64_t)(r->idle_in != 0) << TB_RES_IDLE_SHIFT));
}

typedef struct region {
  uint8_t *p;
  jbyteArray pinned;
  void *base;
} region;

/* Direct buffers arrive as the address Java cached for them (bufferAddress,
 * asked once per buffer), so a call costs no GetDirectBufferAddress (which
 * is an IsInstanceOf and a field read, each a VM transition); heap arrays
 * are pinned for the duration of the call (no copy on HotSpot). The engine
 * never calls back into Java, so holding a critical region across OpenSSL
 * is legal; all JNI lookups happen before the first pin. */
static int region_resolve(JNIEnv *env, region *rg, jlong addr, jbyteArray arr, jint off, jint len) {
  rg->p = NULL;
  rg->pinned = NULL;
  rg->base = NULL;
  if (len <= 0)
    return 0;
  if (addr) {
    rg->p = (uint8_t *)(uintptr_t)addr + off;
    return 0;
  }
  if (!arr) {
    tb_throw_kind(env, TB_ERR_ARGUMENT, "no buffer");
    return -1;
  }
  rg->pinned = arr;
  return 0;
}

static int region_pin(JNIEnv *env, region *rg, jint off) {
  if (!rg->pinned)
    return 0;
  rg->base = (*env)->GetPrimitiveArrayCritical(env, rg->pinned, NULL);
  if (!rg->base) {
    rg->pinned = NULL;
    return -1; /* OutOfMemoryError pending */
  }
  rg->p = (uint8_t *)rg->base + off;
  return 0;
}

static void region_close(JNIEnv *env, region *rg, int mode) {
  if (rg->pinned && rg->base)
    (*env)->ReleasePrimitiveArrayCritical(env, rg->pinned, rg->base, mode);
  rg->pinned = NULL;
}

typedef int (*tb_op)(tb_engine *, const uint8_t *, size_t, uint8_t *, size_t, tb_result *);

/* While a handshake runs, a server may call back into Java (client
 * certificate checks), which a pinned array forbids: heap arrays are copied
 * through the stack then. Handshake traffic is small and rare; records of
 * established connections take the pinned path. */
static jlong run_copied(JNIEnv *env, tb_op op, tb_engine *e, region *src, jbyteArray sa, jint so, jint sl,
                        region *dst, jbyteArray da, jint dof, jint dl) {
  uint8_t in[TB_MAX_RECORD], out[TB_MAX_RECORD];
  size_t inl = sl > 0 ? (size_t)sl : 0, outl = dl > 0 ? (size_t)dl : 0;
  tb_result r;
  int rc;
  if (sa && inl > 0) {
    if (inl > sizeof in)
      inl = sizeof in; /* partial consumption is legal; the caller loops */
    (*env)->GetByteArrayRegion(env, sa, so, (jsize)inl, (jbyte *)in);
    src->p = in;
  }
  if (da && outl > 0) {
    if (outl > sizeof out)
      outl = sizeof out;
    dst->p = out;
  }
  if ((*env)->ExceptionCheck(env))
    return -1;
  e->glue = env;
  rc = op(e, src->p, inl, dst->p, outl, &r);
  e->glue = NULL;
  if (da && r.produced > 0)
    (*env)->SetByteArrayRegion(env, da, dof, (jsize)r.produced, (const jbyte *)out);
  if (rc < 0) {
    tb_throw(env, &e->err);
    return -1;
  }
  return (*env)->ExceptionCheck(env) ? -1 : pack(&r);
}

static jlong run_op(JNIEnv *env, tb_op op, jlong h, jlong sb, jbyteArray sa, jint so, jint sl,
                    jlong db, jbyteArray da, jint dof, jint dl) {
  tb_engine *e = tb_ptr(h);
  region src, dst;
  tb_result r;
  int rc;
  if (region_resolve(env, &src, sb, sa, so, sl) < 0 || region_resolve(env, &dst, db, da, dof, dl) < 0)
    return -1;
  if ((src.pinned || dst.pinned) && (!(e->flags & TB_F_HS_DONE) || (e->flags & TB_F_PHA)))
    return run_copied(env, op, e, &src, src.pinned, so, sl, &dst, dst.pinned, dof, dl);
  if (region_pin(env, &src, so) < 0)
    return -1;
  if (region_pin(env, &dst, dof) < 0) {
    region_close(env, &src, JNI_ABORT);
    return -1;
  }
  e->glue = env;
  rc = op(e, src.p, sl > 0 ? (size_t)sl : 0, dst.p, dl > 0 ? (size_t)dl : 0, &r);
  e->glue = NULL;
  region_close(env, &dst, 0);
  region_close(env, &src, JNI_ABORT);
  if (rc < 0) {
    tb_throw(env, &e->err);
    return -1;
  }
  return pack(&r);
}

static jlong wrap(JNIEnv *env, jclass c, jlong h, jlong sb, jbyteArray sa, jint so, jint sl,
                  jlong db, jbyteArray da, jint dof, jint dl) {
  return run_op(env, tb_engine_wrap, h, sb, sa, so, sl, db, da, dof, dl);
}

static jlong unwrap(JNIEnv *env, jclass c, jlong h, jlong sb, jbyteArray sa, jint so, jint sl,
                    jlong db, jbyteArray da, jint dof, jint dl) {
  return run_op(env, tb_engine_unwrap, h, sb, sa, so, sl, db, da, dof, dl);
}

/* Where a direct buffer's memory starts; 0 for anything else. */
static jlong buffer_address(JNIEnv *env, jclass c, jobject buf) {
  void *a = buf ? (*env)->GetDirectBufferAddress(env, buf) : NULL;
  return tb_handle(a);
}

static jmethodID verify_peer_mid;

/* tb_hooks.verify_peer: a server asks the engine's Java peer, on this
 * thread, inside the JNI call that is running the handshake. */
static int verify_peer(tb_engine *e, STACK_OF(X509) *chain, int *x509_err) {
  JNIEnv *env = e->glue;
  jobject cb;
  jobjectArray der;
  jint rc;
  if (!env || !e->owner)
    return 0;
  cb = (*env)->NewLocalRef(env, (jweak)e->owner);
  if (!cb)
    return 0;
  der = tb_der_chain(env, NULL, chain);
  if (!der) {
    (*env)->ExceptionClear(env);
    (*env)->DeleteLocalRef(env, cb);
    return 0;
  }
  rc = (*env)->CallIntMethod(env, cb, verify_peer_mid, der);
  if ((*env)->ExceptionCheck(env)) {
    (*env)->ExceptionClear(env); /* the Java side keeps the cause itself */
    rc = 1;
  }
  (*env)->DeleteLocalRef(env, der);
  (*env)->DeleteLocalRef(env, cb);
  if (rc == 0)
    return 1;
  *x509_err = rc;
  return 0;
}

static const tb_hooks jni_hooks = {verify_peer};

int tb_jni_engine_init(JNIEnv *env) {
  jclass c = (*env)->FindClass(env, "org/tlsbridge/internal/NativeCallbacks");
  if (!c)
    return -1;
  verify_peer_mid = (*env)->GetMethodID(env, c, "verifyPeer", "([[B)I");
  (*env)->DeleteLocalRef(env, c);
  if (!verify_peer_mid)
    return -1;
  tb_set_hooks(&jni_hooks);
  return 0;
}

static jlong engine_new(JNIEnv *env, jclass c, jlong ctx, jboolean client, jobject callbacks) {
  tb_error err;
  tb_engine *e;
  tb_err_clear(&err);
  e = tb_engine_new(tb_ptr(ctx), client == JNI_TRUE, &err);
  if (!e) {
    tb_throw(env, &err);
    return 0;
  }
  if (callbacks) {
    /* weak: the engine must stay collectable so its Cleaner can run */
    e->owner = (*env)->NewWeakGlobalRef(env, callbacks);
    if (!e->owner) {
      tb_engine_free(e);
      return 0;
    }
  }
  return tb_handle(e);
}

static void engine_free(JNIEnv *env, jclass c, jlong h) {
  tb_engine *e = tb_ptr(h);
  if (!e)
    return;
  if (e->owner)
    (*env)->DeleteWeakGlobalRef(env, (jweak)e->owner);
  e->owner = NULL;
  tb_engine_free(e);
}

static jint begin(JNIEnv *env, jclass c, jlong h) {
  tb_engine *e = tb_ptr(h);
  if (tb_engine_begin(e) < 0) {
    tb_throw(env, &e->err);
    return -1;
  }
  return tb_engine_hs_status(e, 0);
}

static jint close_outbound(JNIEnv *env, jclass c, jlong h) {
  tb_engine *e = tb_ptr(h);
  tb_engine_close_outbound(e);
  return tb_engine_hs_status(e, 0);
}

static jint close_inbound(JNIEnv *env, jclass c, jlong h) {
  return tb_engine_close_inbound(tb_ptr(h));
}

/* Packed engine state for the cheap Java getters (layout in jni_wire.h). */
static jint state(JNIEnv *env, jclass c, jlong h) {
  tb_engine *e = tb_ptr(h);
  uint32_t f = e->flags;
  return (jint)(((unsigned)tb_engine_hs_status(e, 0) & TB_ST_HS_MASK) |
                ((f & TB_F_IN_DONE) ? TB_ST_IN_DONE : 0) | (tb_outbound_done(e) ? TB_ST_OUT_DONE : 0) |
                ((f & TB_F_HS_DONE) ? TB_ST_HS_DONE : 0) | ((f & TB_F_FAILED) ? TB_ST_FAILED : 0) |
                ((f & TB_F_STARTED) ? TB_ST_STARTED : 0) |
                ((unsigned)(e->task & TB_ST_TASK_MASK) << TB_ST_TASK_SHIFT) |
                ((f & TB_F_PEER_CLOSED) ? TB_ST_PEER_CLOSED : 0) | ((f & TB_F_PHA) ? TB_ST_PHA : 0));
}

static jint task_done(JNIEnv *env, jclass c, jlong h) {
  tb_engine *e = tb_ptr(h);
  tb_engine_task_done(e);
  return tb_engine_hs_status(e, 0);
}

static void verify_result(JNIEnv *env, jclass c, jlong h, jboolean ok, jint x509err) {
  tb_engine_set_verify_result(tb_ptr(h), ok == JNI_TRUE, x509err);
}

static jobjectArray pending_chain(JNIEnv *env, jclass c, jlong h) {
  tb_engine *e = tb_ptr(h);
  if (!e->pending_chain || sk_X509_num(e->pending_chain) < 1)
    return NULL;
  return tb_der_chain(env, NULL, e->pending_chain);
}

struct versions {
  SSL *ssl;
  int min, max;
};

static int configure_ssl(void *target, const char *l12, const char *l13, tb_error *err) {
  struct versions *v = target;
  return tb_configure(v->ssl, l12, l13, v->min, v->max, err);
}

static void configure(JNIEnv *env, jclass c, jlong h, jstring l12, jstring l13, jint minv, jint maxv,
                      jint verify, jboolean server_pref, jlong limit_gcm, jlong limit_chacha) {
  tb_engine *e = tb_ptr(h);
  struct versions v = {e->ssl, minv, maxv};
  tb_key_limits(e, limit_gcm > 0 ? (uint64_t)limit_gcm : 0, limit_chacha > 0 ? (uint64_t)limit_chacha : 0);
  if (tb_with_lists(env, l12, l13, configure_ssl, &v) != 0)
    return;
  if (!(e->flags & TB_F_CLIENT)) {
    int mode = SSL_VERIFY_NONE;
    if (verify == TB_AUTH_WANT || verify == TB_AUTH_NEED)
      mode = SSL_VERIFY_PEER | SSL_VERIFY_CLIENT_ONCE;
    if (verify == TB_AUTH_NEED)
      mode |= SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
    SSL_set_verify(e->ssl, mode, NULL);
  }
  if (server_pref)
    SSL_set_options(e->ssl, SSL_OP_CIPHER_SERVER_PREFERENCE);
  else
    SSL_clear_options(e->ssl, SSL_OP_CIPHER_SERVER_PREFERENCE);
}

static void use_key(JNIEnv *env, jclass c, jlong h, jlong key) {
  tb_engine *e = tb_ptr(h);
  tb_error err;
  tb_err_clear(&err);
  if (tb_keymat_use(e, tb_ptr(key), &err) < 0)
    tb_throw(env, &err);
}

/* The client's server name as bytes (SNIHostName.getEncoded(), as SunJSSE
 * sends it); OpenSSL takes a C string, so no NUL and at most 255 bytes. */
static void set_host(JNIEnv *env, jclass c, jlong h, jbyteArray sni) {
  tb_engine *e = tb_ptr(h);
  char name[TLSEXT_MAXLEN_host_name + 1];
  jsize n = (*env)->GetArrayLength(env, sni);
  if (n < 1 || n > TLSEXT_MAXLEN_host_name) {
    tb_throw_kind(env, TB_ERR_SSL, "a server name must have 1 to 255 bytes");
    return;
  }
  (*env)->GetByteArrayRegion(env, sni, 0, n, (jbyte *)name);
  name[n] = '\0';
  if (memchr(name, 0, (size_t)n)) {
    tb_throw_kind(env, TB_ERR_SSL, "a server name cannot hold a NUL byte");
    return;
  }
  ERR_clear_error();
  if (!SSL_set_tlsext_host_name(e->ssl, name)) {
    tb_error err;
    tb_err_from_openssl(&err, TB_ERR_SSL, "cannot set the server name");
    tb_throw(env, &err);
  }
}

static void set_groups(JNIEnv *env, jclass c, jlong h, jstring list) {
  tb_engine *e = tb_ptr(h);
  const char *l = (*env)->GetStringUTFChars(env, list, NULL);
  int ok;
  if (!l)
    return;
  ERR_clear_error();
  ok = SSL_set1_groups_list(e->ssl, l);
  (*env)->ReleaseStringUTFChars(env, list, l);
  if (!ok) {
    tb_error err;
    tb_err_from_openssl(&err, TB_ERR_ARGUMENT, "cannot set named groups");
    tb_throw(env, &err);
  }
}

static void request_pha(JNIEnv *env, jclass c, jlong h, jboolean need) {
  tb_engine *e = tb_ptr(h);
  if (tb_engine_request_pha(e, need == JNI_TRUE) != 0)
    tb_throw(env, &e->err);
}

/* Whether the engine parsed a suite list of its own (tests and diagnostics):
 * false while it shares its context's, as engines with the held list do. */
static jboolean own_ciphers(JNIEnv *env, jclass c, jlong h) {
  tb_engine *e = tb_ptr(h);
  return tb_ssl_own_ciphers(e->ssl) ? JNI_TRUE : JNI_FALSE;
}

const JNINativeMethod tb_engine_methods[] = {
    TB_N("engineNew", "(JZLorg/tlsbridge/internal/NativeCallbacks;)J", engine_new),
    TB_N("engineFree", "(J)V", engine_free),
    TB_N("wrap", "(JJ[BIIJ[BII)J", wrap),
    TB_N("unwrap", "(JJ[BIIJ[BII)J", unwrap),
    TB_N("bufferAddress", "(Ljava/nio/ByteBuffer;)J", buffer_address),
    TB_N("begin", "(J)I", begin),
    TB_N("closeOutbound", "(J)I", close_outbound),
    TB_N("closeInbound", "(J)I", close_inbound),
    TB_N("state", "(J)I", state),
    TB_N("taskDone", "(J)I", task_done),
    TB_N("verifyResult", "(JZI)V", verify_result),
    TB_N("pendingChain", "(J)[[B", pending_chain),
    TB_N("configure", "(JLjava/lang/String;Ljava/lang/String;IIIZJJ)V", configure),
    TB_N("ownCiphers", "(J)Z", own_ciphers),
    TB_N("useKey", "(JJ)V", use_key),
    TB_N("setServerName", "(J[B)V", set_host),
    TB_N("setGroups", "(JLjava/lang/String;)V", set_groups),
    TB_N("requestPostHandshakeAuth", "(JZ)V", request_pha),
};
const int tb_engine_count = sizeof tb_engine_methods / sizeof tb_engine_methods[0];
