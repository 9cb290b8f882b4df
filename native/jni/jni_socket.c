/* The native socket's JNI face (org.tlsbridge.socket.NativeSocket). Reads
 * and writes go between the caller's byte[] and OpenSSL directly: the array
 * is pinned only around each non-blocking OpenSSL call, never while the
 * thread waits in poll(), so the GC is never held up by a slow peer. */
#include "jni_util.h"
#include "../core/socket.h"

#include <string.h>

static JavaVM *vm;

static tb_sock *sock(jlong h) { return tb_ptr(h); }

/* A no-wait call (timeout < 0, a virtual thread's: socket_park.c) that
 * would wait returns what it waits for instead of throwing. */
static int blocked(const tb_error *err) {
  return err->kind != TB_ERR_BLOCKED ? 0 : err->code == TB_WAIT_WRITE ? TB_SOCK_BLOCKED_WRITE : TB_SOCK_BLOCKED_READ;
}

static int fail(JNIEnv *env, const tb_error *err) {
  if (err->kind != TB_ERR_NONE)
    tb_throw(env, err);
  return -1;
}

static int get_addr(JNIEnv *env, jbyteArray bytes, jint port, jint scope, tb_addr *a) {
  memset(a, 0, sizeof *a);
  a->port = port;
  a->scope = (uint32_t)scope;
  if (!bytes)
    return 0; /* the wildcard */
  a->len = (*env)->GetArrayLength(env, bytes);
  if (a->len != 4 && a->len != 16) {
    tb_throw_kind(env, TB_ERR_ARGUMENT, "an address is 4 or 16 bytes");
    return -1;
  }
  (*env)->GetByteArrayRegion(env, bytes, 0, a->len, (jbyte *)a->bytes);
  return (*env)->ExceptionCheck(env) ? -1 : 0;
}

static jlong sock_new(JNIEnv *env, jclass c, jboolean ipv6) {
  tb_error err;
  tb_sock *s;
  tb_err_clear(&err);
  s = tb_sock_new(ipv6 ? AF_INET6 : AF_INET, &err);
  if (!s)
    fail(env, &err);
  return tb_handle(s);
}

static void sock_bind(JNIEnv *env, jclass c, jlong h, jbyteArray addr, jint port, jint scope, jboolean reuse) {
  tb_error err;
  tb_addr a;
  tb_err_clear(&err);
  if (get_addr(env, addr, port, scope, &a) == 0 && tb_sock_bind(sock(h), &a, reuse == JNI_TRUE, &err) < 0)
    fail(env, &err);
}

static void sock_listen(JNIEnv *env, jclass c, jlong h, jint backlog) {
  tb_error err;
  tb_err_clear(&err);
  if (tb_sock_listen(sock(h), backlog, &err) < 0)
    fail(env, &err);
}

static jlong sock_accept(JNIEnv *env, jclass c, jlong h, jint timeout_ms) {
  tb_error err;
  tb_sock *s;
  tb_err_clear(&err);
  int prev = tb_sock_set_nowait(timeout_ms < 0);
  s = tb_sock_accept(sock(h), timeout_ms, &err);
  tb_sock_set_nowait(prev);
  if (!s && blocked(&err))
    return blocked(&err);
  if (!s)
    fail(env, &err);
  return tb_handle(s);
}

static jint sock_connect(JNIEnv *env, jclass c, jlong h, jbyteArray addr, jint port, jint scope, jint timeout_ms) {
  tb_error err;
  tb_addr a;
  int prev, rc;
  tb_err_clear(&err);
  if (get_addr(env, addr, port, scope, &a) < 0)
    return -1;
  prev = tb_sock_set_nowait(timeout_ms < 0);
  rc = tb_sock_connect(sock(h), &a, timeout_ms, &err);
  tb_sock_set_nowait(prev);
  if (rc < 0 && blocked(&err))
    return blocked(&err);
  return rc < 0 ? fail(env, &err) : 0;
}

static void sock_set_opt(JNIEnv *env, jclass c, jlong h, jint opt, jint value) {
  tb_error err;
  tb_err_clear(&err);
  if (tb_sock_setopt(sock(h), opt, value, &err) < 0)
    fail(env, &err);
}

static jint sock_get_opt(JNIEnv *env, jclass c, jlong h, jint opt) {
  tb_error err;
  int v = 0;
  tb_err_clear(&err);
  if (tb_sock_getopt(sock(h), opt, &v, &err) < 0)
    return fail(env, &err);
  return v;
}

/* address bytes, then the port (2 bytes, big-endian), then for IPv6 the
 * scope id (4 bytes); null when there is no such address (not connected). */
static jbyteArray sock_name(JNIEnv *env, jclass c, jlong h, jboolean peer) {
  tb_error err;
  tb_addr a;
  uint8_t buf[22];
  size_t n;
  tb_err_clear(&err);
  if (tb_sock_name(sock(h), peer == JNI_TRUE, &a, &err) < 0 || a.len == 0)
    return NULL;
  memcpy(buf, a.bytes, (size_t)a.len);
  n = (size_t)a.len;
  buf[n++] = (uint8_t)(a.port >> 8);
  buf[n++] = (uint8_t)a.port;
  if (a.len == 16) {
    buf[n++] = (uint8_t)(a.scope >> 24);
    buf[n++] = (uint8_t)(a.scope >> 16);
    buf[n++] = (uint8_t)(a.scope >> 8);
    buf[n++] = (uint8_t)a.scope;
  }
  return tb_bytes(env, buf, n);
}

static void sock_shutdown(JNIEnv *env, jclass c, jlong h, jboolean out) {
  tb_error err;
  tb_err_clear(&err);
  if (out)
    tb_sock_close_notify(sock(h));
  if (tb_sock_shutdown(sock(h), out == JNI_TRUE, &err) < 0)
    fail(env, &err);
}

static void sock_close(JNIEnv *env, jclass c, jlong h, jboolean notify) {
  if (notify)
    tb_sock_close_notify(sock(h));
  tb_sock_close(sock(h));
}

/* Only from the owner's Cleaner: no thread can be inside a call any more. */
static void sock_free(JNIEnv *env, jclass c, jlong h) { tb_sock_free(sock(h)); }

static jint sock_fd(JNIEnv *env, jclass c, jlong h) { return sock(h)->fd; }

static void release_owner(void *owner) {
  JNIEnv *env;
  /* the last reference is always dropped inside a JNI call, so this thread
   * is attached */
  if (vm && (*vm)->GetEnv(vm, (void **)&env, JNI_VERSION_1_8) == JNI_OK)
    (*env)->DeleteWeakGlobalRef(env, (jweak)owner);
}

/* TLS on the descriptor; returns the engine handle the session and
 * handshake natives of Native take. */
static jlong sock_attach(JNIEnv *env, jclass c, jlong h, jlong ctx, jboolean client, jobject callbacks) {
  tb_sock *s = sock(h);
  tb_error err;
  jlong out = 0;
  tb_err_clear(&err);
  if (!vm && (*env)->GetJavaVM(env, &vm) != 0)
    return 0;
  if (tb_sock_enter(s, &err) < 0) {
    fail(env, &err);
    return 0;
  }
  if (tb_sock_attach(s, tb_ptr(ctx), client == JNI_TRUE, &err) < 0) {
    fail(env, &err);
  } else if (callbacks) {
    /* weak: the socket must stay collectable so its Cleaner can run */
    s->e->owner = (*env)->NewWeakGlobalRef(env, callbacks);
    s->release_owner = release_owner;
    if (s->e->owner)
      out = tb_handle(s->e);
  } else {
    out = tb_handle(s->e);
  }
  tb_sock_leave(s);
  return out;
}

/* 0 when done, else the delegated task to run on this thread first. The
 * server's client-certificate hook calls Java from inside OpenSSL here, so
 * the engine carries this env for the call and nothing is pinned. */
static jint sock_handshake(JNIEnv *env, jclass c, jlong h, jint timeout_ms) {
  tb_sock *s = sock(h);
  tb_error err;
  int rc;
  int prev;
  tb_err_clear(&err);
  prev = tb_sock_set_nowait(timeout_ms < 0);
  rc = tb_sock_handshake(s, timeout_ms, env, &err);
  tb_sock_set_nowait(prev);
  if (rc < 0 && blocked(&err))
    return blocked(&err);
  if (rc < 0)
    return fail(env, &err);
  return rc;
}

/* Always takes a reference (sockLeave drops it); 0 when closed. */
static jlong sock_enter(JNIEnv *env, jclass c, jlong h) {
  tb_sock *s = sock(h);
  atomic_fetch_add(&s->refs, 1);
  return atomic_load(&s->closed) ? 0 : tb_handle(s->e);
}

static void sock_leave(JNIEnv *env, jclass c, jlong h) { tb_sock_leave(sock(h)); }

static void sock_task_done(JNIEnv *env, jclass c, jlong h) {
  tb_sock *s = sock(h);
  tb_error err;
  if (tb_sock_enter(s, &err) < 0)
    return;
  if (!s->e) {
    tb_sock_leave(s);
    return;
  }
  pthread_mutex_lock(&s->mu);
  tb_engine_task_done(s->e);
  pthread_mutex_unlock(&s->mu);
  tb_sock_leave(s);
}

static void sock_key_update(JNIEnv *env, jclass c, jlong h) {
  tb_error err;
  tb_err_clear(&err);
  if (tb_sock_key_update(sock(h), &err) < 0)
    fail(env, &err);
}

typedef struct pin_arg {
  JNIEnv *env;
  jbyteArray arr;
  jint off;
} pin_arg;

static uint8_t *pin(void *arg) {
  pin_arg *a = arg;
  uint8_t *p = (*a->env)->GetPrimitiveArrayCritical(a->env, a->arr, NULL);
  return p ? p + a->off : NULL;
}

static void unpin(void *arg, uint8_t *p, int commit) {
  pin_arg *a = arg;
  (*a->env)->ReleasePrimitiveArrayCritical(a->env, a->arr, p - a->off, commit ? 0 : JNI_ABORT);
}

static jint sock_read(JNIEnv *env, jclass c, jlong h, jbyteArray b, jint off, jint len, jint timeout_ms) {
  tb_error err;
  pin_arg a = {env, b, off};
  long n;
  int prev;
  tb_err_clear(&err);
  prev = tb_sock_set_nowait(timeout_ms < 0);
  n = tb_sock_read(sock(h), pin, unpin, &a, (size_t)len, timeout_ms, &err);
  tb_sock_set_nowait(prev);
  if (n == TB_SOCK_ERR && blocked(&err))
    return blocked(&err);
  if (n == TB_SOCK_ERR)
    return fail(env, &err);
  return (jint)n; /* a count, TB_SOCK_EOF or TB_SOCK_TASK(task): NativeSocket.read decodes */
}

/* The bytes written; a no-wait write that would wait returns how far it
 * got in the low 32 bits and -TB_SOCK_BLOCKED_* in the high ones. */
static jlong sock_write(JNIEnv *env, jclass c, jlong h, jbyteArray b, jint off, jint len, jboolean nowait) {
  tb_error err;
  pin_arg a = {env, b, off};
  long n;
  int prev;
  tb_err_clear(&err);
  prev = tb_sock_set_nowait(nowait == JNI_TRUE);
  n = tb_sock_write(sock(h), pin, unpin, &a, (size_t)len, &err);
  tb_sock_set_nowait(prev);
  if (n == TB_SOCK_ERR)
    return fail(env, &err);
  if (blocked(&err))
    return (jlong)n | ((jlong)-blocked(&err) << 32);
  return (jlong)n;
}

static jint poller_new(JNIEnv *env, jclass c) {
  tb_error err;
  int fd;
  tb_err_clear(&err);
  fd = tb_poller_new(&err);
  return fd < 0 ? fail(env, &err) : fd;
}

static void sock_arm(JNIEnv *env, jclass c, jlong h, jint epfd, jint what, jlong token) {
  tb_error err;
  tb_err_clear(&err);
  if (tb_sock_arm(sock(h), epfd, what, (uint64_t)token, &err) < 0)
    fail(env, &err);
}

/* Blocks (a platform thread: the poller's) until sockets armed in epfd are
 * ready; fills tokens with theirs and returns how many. */
static jint poller_wait(JNIEnv *env, jclass c, jint epfd, jlongArray tokens) {
  tb_error err;
  uint64_t t[64];
  jlong v[64];
  int n, i, max = (*env)->GetArrayLength(env, tokens);
  tb_err_clear(&err);
  n = tb_poller_wait(epfd, t, max, &err);
  if (n < 0)
    return fail(env, &err);
  for (i = 0; i < n; i++)
    v[i] = (jlong)t[i];
  (*env)->SetLongArrayRegion(env, tokens, 0, n, v);
  return n;
}

static jint sock_available(JNIEnv *env, jclass c, jlong h) { return tb_sock_pending(sock(h)); }

/* TLS counters of the connection: bytes in/out on the wire, plaintext
 * in/out, records in/out, ns reading/writing/handshaking. */
static jlongArray sock_stats(JNIEnv *env, jclass c, jlong h) {
  tb_sock *s = sock(h);
  tb_error err;
  jlong v[9] = {0};
  jlongArray a;
  int in = tb_sock_enter(s, &err) == 0;
  if (in && s->e) {
    const tb_stats *st = &s->e->stats;
    v[0] = (jlong)st->bytes_in, v[1] = (jlong)st->bytes_out, v[2] = (jlong)st->app_in;
    v[3] = (jlong)st->app_out, v[4] = (jlong)st->records_in, v[5] = (jlong)st->records_out;
    v[6] = (jlong)st->ns_read, v[7] = (jlong)st->ns_write, v[8] = (jlong)st->ns_handshake;
  }
  if (in)
    tb_sock_leave(s);
  a = (*env)->NewLongArray(env, 9);
  if (a)
    (*env)->SetLongArrayRegion(env, a, 0, 9, v);
  return a;
}

const JNINativeMethod tb_socket_methods[] = {
    TB_N("sockNew", "(Z)J", sock_new),
    TB_N("sockBind", "(J[BIIZ)V", sock_bind),
    TB_N("sockListen", "(JI)V", sock_listen),
    TB_N("sockAccept", "(JI)J", sock_accept),
    TB_N("sockConnect", "(J[BIII)I", sock_connect),
    TB_N("sockSetOpt", "(JII)V", sock_set_opt),
    TB_N("sockGetOpt", "(JI)I", sock_get_opt),
    TB_N("sockName", "(JZ)[B", sock_name),
    TB_N("sockShutdown", "(JZ)V", sock_shutdown),
    TB_N("sockClose", "(JZ)V", sock_close),
    TB_N("sockFree", "(J)V", sock_free),
    TB_N("sockFd", "(J)I", sock_fd),
    TB_N("sockAttach", "(JJZLorg/tlsbridge/internal/NativeCallbacks;)J", sock_attach),
    TB_N("sockHandshake", "(JI)I", sock_handshake),
    TB_N("sockEnter", "(J)J", sock_enter),
    TB_N("sockLeave", "(J)V", sock_leave),
    TB_N("sockTaskDone", "(J)V", sock_task_done),
    TB_N("sockKeyUpdate", "(J)V", sock_key_update),
    TB_N("sockRead", "(J[BIII)I", sock_read),
    TB_N("sockWrite", "(J[BIIZ)J", sock_write),
    TB_N("pollerNew", "()I", poller_new),
    TB_N("sockArm", "(JIIJ)V", sock_arm),
    TB_N("pollerWait", "(I[J)I", poller_wait),
    TB_N("sockAvailable", "(J)I", sock_available),
    TB_N("sockStats", "(J)[J", sock_stats),
};
const int tb_socket_count = sizeof tb_socket_methods / sizeof tb_socket_methods[0];
