/*
 * Sockets whose descriptor tlsbridge owns: created, connected or accepted,
 * read and written here, with OpenSSL on the descriptor itself (SSL_set_fd).
 * No JNI in this layer.
 *
 * Threads: one reader, one writer, one handshaker at a time, and close()
 * from anywhere. A connected descriptor is blocking, but OpenSSL only ever
 * reads and writes it with MSG_DONTWAIT (socket_bio.c), under the mutex,
 * which is held only while inside OpenSSL. Every wait happens outside the
 * mutex: for input a blocking recv() into the socket's input buffer
 * (tb_sock_fill), for anything else a poll(); close() ends both with
 * shutdown(2). Each caller holds a reference for the
 * length of its call; close() only marks and wakes, and whoever drops the
 * last reference closes the descriptor and frees the SSL, so nothing is
 * ever freed or reused under a thread still inside a call. The small struct
 * itself lives until tb_sock_free (the owner's Cleaner), so a thread that
 * races close() to a call finds it closed instead of freed.
 */
#ifndef TB_SOCKET_H
#define TB_SOCKET_H

#include "tb.h"
#include "seal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <netinet/in.h>

/* Options, numbered for Java (NativeConstants.java, checked at load). */
enum tb_sockopt {
  TB_SO_REUSEADDR = 1, TB_SO_NODELAY = 2, TB_SO_KEEPALIVE = 3, TB_SO_RCVBUF = 4,
  TB_SO_SNDBUF = 5, TB_SO_LINGER = 6, TB_SO_TCLASS = 7
};

/* What a blocking wait wants. */
enum { TB_WAIT_READ = 1, TB_WAIT_WRITE = 2 };

/* Results of the TLS calls besides byte counts. */
#define TB_SOCK_EOF (-1)
#define TB_SOCK_ERR (-2)
/* A read stopped for a post-handshake task (TB_TASK_*) the caller must run,
 * then call tb_engine_task_done, then read again. */
#define TB_SOCK_TASK_BASE (-16)
#define TB_SOCK_TASK(task) (TB_SOCK_TASK_BASE - (task))

/* An address as Java passes it: 4 or 16 bytes, a port, an IPv6 scope. */
typedef struct tb_addr {
  uint8_t bytes[16];
  int len;
  int port;
  uint32_t scope;
} tb_addr;

typedef struct tb_sock {
  int fd;
  int family;
  atomic_int refs;          /* 1 for the owner + 1 per thread inside a call */
  atomic_int closed;
  atomic_int released;      /* fd, eventfd and SSL are gone (struct lives on) */
  atomic_int shut_in, shut_out;
  pthread_mutex_t mu;       /* held only while inside OpenSSL */
  /* The last recv() left the kernel queue empty, or a handshake flight just
   * went out: the BIO does not try the kernel, the caller fills (mu). */
  int rd_drained;
  /* Input received by tb_sock_fill that OpenSSL has not read yet (mu);
   * in_buf itself is written only by the one thread that is `filling`. */
  uint8_t *in_buf;
  size_t in_off, in_len;
  int in_err;               /* errno of a failed fill, for the BIO to report (mu) */
  int bio_reads_ahead;      /* the BIO's recv() fills in_buf, not OpenSSL's buffer (tb_sock_attach) */
  /* Records on their way out (socket_bio.c): a TLS 1.3 server's tickets,
   * held to go out with the next record or before the next wait, and
   * records the BIO sealed that the kernel has not taken yet; out_off of
   * out_len already sent, out_cap allocated (mu). */
  uint8_t *out_buf;
  size_t out_off, out_len, out_cap;
  /* The sending keys, once OpenSSL hands them over: the BIO then seals
   * each record itself (seal.c) (mu). */
  tb_seal *seal;
  /* errno of a send that failed for good: nothing more is sent, and the BIO
   * fails every write without reading it (mu) */
  int wr_err;
  uint64_t sent;            /* record bytes the kernel took (mu) */
  int filling;              /* a thread is blocked in recv() into in_buf (mu) */
  int64_t rcvtimeo_ms;      /* SO_RCVTIMEO now on the descriptor (the filler's) */
  int connecting;           /* a no-wait connect is in progress (the connecting thread's) */
  tb_engine *e;             /* NULL until TLS is attached (never for a listener) */
  /* Addresses known without asking the kernel: [0] local, [1] peer, valid
   * when bit 1 << i of `named` is set. An accepted socket gets its peer from
   * accept4 and, when the listener is bound to one address, its local
   * address from the listener; a listener caches its own at its first
   * accept (under mu, in `local_known`). */
  tb_addr names[2];
  int named;
  int local_known;
  /* A listener whose last accept found its queue empty: the next accept
   * polls before accept4 (see tb_sock_accept). Racy by design: only a hint. */
  atomic_int accept_idle;
  /* Called with e->owner just before the engine is freed, on the thread
   * that drops the last reference, so the glue can release its handle. */
  void (*release_owner)(void *owner);
} tb_sock;


/* socket.c: descriptors, references, waits */
tb_sock *tb_sock_new(int family, tb_error *err);
tb_sock *tb_sock_wrap(int fd, int family, tb_error *err); /* takes fd */
int tb_sock_enter(tb_sock *s, tb_error *err);
void tb_sock_leave(tb_sock *s);
void tb_sock_close(tb_sock *s);
void tb_sock_free(tb_sock *s); /* closes if needed; no call may be running */
/* 1 ready, 0 timed out, -1 closed or failed (err set). deadline 0: none. */
int tb_sock_wait(tb_sock *s, int what, uint64_t deadline_ns, tb_error *err);
uint64_t tb_deadline(int64_t timeout_ms);
/* err = "<what>: <strerror(code)>" of the given kind; returns -1 */
int tb_sock_sys_fail(tb_error *err, int kind, const char *what, int code);

/* socket_park.c: calls that never wait, for threads that wait elsewhere.
 * With nowait set (per thread, around one call; returns the previous
 * value), a call that would wait for the peer fails with TB_ERR_BLOCKED and
 * err->code = TB_WAIT_READ or TB_WAIT_WRITE (tb_sock_blocked, returns -1);
 * calling it again once the descriptor is ready goes on where it stopped. */
int tb_sock_set_nowait(int on);
int tb_sock_nowait(void);
int tb_sock_blocked(tb_error *err, int what);
/* Results the JNI layer returns for a blocked call. */
#define TB_SOCK_BLOCKED_READ (-3)
#define TB_SOCK_BLOCKED_WRITE (-4)
/* An epoll set (its descriptor, or -1), a one-shot arming of s's descriptor
 * in it for `what` with `token`, and the wait for ready tokens (at most
 * min(max, 64); -1 failed). */
int tb_poller_new(tb_error *err);
int tb_sock_arm(tb_sock *s, int epfd, int what, uint64_t token, tb_error *err);
int tb_poller_wait(int epfd, uint64_t *tokens, int max, tb_error *err);

/* socket_bio.c: OpenSSL's BIO on the descriptor and the wait for input */
BIO *tb_sock_bio(tb_sock *s); /* NULL: out of memory */
/* Waits (timeout_ms 0: for ever) until input is staged, or the peer's FIN
 * or an error is there for the BIO to report: 1; 0 timed out; -1 closed,
 * or the timeout could not be set (err set). Mutex not held. */
int tb_sock_fill(tb_sock *s, int64_t timeout_ms, tb_error *err);
/* Sends held and queued records, as far as the kernel takes them now: 0
 * when none are left, 1 when some are (wait for room), or -1 with errno when
 * the descriptor failed. Mutex held. */
int tb_sock_flush_out(tb_sock *s);

/* socket_net.c: bind, listen, accept, connect, options, addresses */
int tb_sock_bind(tb_sock *s, const tb_addr *a, int reuse, tb_error *err);
int tb_sock_listen(tb_sock *s, int backlog, tb_error *err);
tb_sock *tb_sock_accept(tb_sock *s, int64_t timeout_ms, tb_error *err);
int tb_sock_connect(tb_sock *s, const tb_addr *a, int64_t timeout_ms, tb_error *err);
int tb_sock_setopt(tb_sock *s, int opt, int value, tb_error *err);
int tb_sock_getopt(tb_sock *s, int opt, int *value, tb_error *err);
int tb_sock_name(tb_sock *s, int peer, tb_addr *a, tb_error *err);
int tb_sock_shutdown(tb_sock *s, int out, tb_error *err);

/* socket_tls.c: OpenSSL on the descriptor */
int tb_sock_attach(tb_sock *s, SSL_CTX *ctx, int client, tb_error *err);
/* 0 done, >0 a TB_TASK_* to run before calling again, -1 failed (err set). */
/* glue: the glue layer's per-call context, set on the engine during the call. */
int tb_sock_handshake(tb_sock *s, int64_t timeout_ms, void *glue, tb_error *err);
/* Bytes read, TB_SOCK_EOF, TB_SOCK_TASK(task) or TB_SOCK_ERR (err set). `pin` maps the
 * caller's memory just around each OpenSSL call (and `unpin` releases it),
 * so nothing stays pinned while the thread waits. */
typedef uint8_t *(*tb_pin_fn)(void *arg);
typedef void (*tb_unpin_fn)(void *arg, uint8_t *p, int commit);
long tb_sock_read(tb_sock *s, tb_pin_fn pin, tb_unpin_fn unpin, void *arg, size_t len,
                  int64_t timeout_ms, tb_error *err);
long tb_sock_write(tb_sock *s, tb_pin_fn pin, tb_unpin_fn unpin, void *arg, size_t len, tb_error *err);
int tb_sock_pending(tb_sock *s);
/* TLS 1.3: a KeyUpdate that goes out with the next write; TLS 1.2: an error
 * (renegotiation is refused), as the engine's beginHandshake does. */
int tb_sock_key_update(tb_sock *s, tb_error *err);
/* Sends close_notify if the handshake is done and output is still open;
 * never blocks for long (what the kernel does not take at once is dropped). */
void tb_sock_close_notify(tb_sock *s);

#endif
