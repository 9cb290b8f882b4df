/* The BIO OpenSSL reads and writes a socket's descriptor through, and the
 * one way a thread waits for the peer's bytes.
 *
 * The descriptor is blocking, but nothing blocks inside OpenSSL: the BIO's
 * recv and send pass MSG_DONTWAIT, under the socket's mutex. A thread that
 * must wait for input calls tb_sock_fill, which blocks in recv() outside the
 * mutex into the socket's input buffer; the BIO hands those bytes to OpenSSL
 * before it asks the kernel again. Waiting and reading are then one syscall
 * instead of a poll() and a read(): a keep-alive request costs one recv and
 * one send. The wait ends with data, the peer's FIN, the receive timeout
 * (SO_RCVTIMEO, set only when the caller's timeout changes) or close(),
 * whose shutdown(2) wakes a blocked recv as it woke a poll. A TLS 1.3
 * server's tickets wait in the BIO for the next record (see hold). */
#include "socket.h"
#include "tb_alloc.h"

#include <errno.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/uio.h>

/* One whole TLS record and then some: a request, or a record of a bulk
 * transfer, arrives in one fill. */
#define TB_SOCK_INBUF (17 * 1024)
/* Room for the TLS 1.3 tickets a server holds back (two are ~540 bytes;
 * with a client's certificate chain in them, a few KiB). */
#define TB_SOCK_HOLD 4096

static int take_staged(tb_sock *s, char *out, int len) {
  size_t n = s->in_len - s->in_off;
  if (n > (size_t)len)
    n = (size_t)len;
  memcpy(out, s->in_buf + s->in_off, n);
  s->in_off += n;
  if (s->in_off == s->in_len)
    s->in_off = s->in_len = 0;
  return (int)n;
}

/* Mutex held (inside OpenSSL). */
static int sock_bio_read(BIO *b, char *out, int len) {
  tb_sock *s = BIO_get_data(b);
  ssize_t n;
  BIO_clear_retry_flags(b);
  if (len <= 0)
    return 0;
  if (s->in_len > s->in_off)
    return take_staged(s, out, len);
  if (s->in_err) { /* the fill's recv failed: OpenSSL reports it as a syscall error */
    errno = s->in_err;
    s->in_err = 0;
    return -1;
  }
  /* Another thread is receiving the next bytes: reading the kernel now
   * would take bytes that come after them. Or the kernel's queue was empty
   * at the last recv: this one would most likely fail with EAGAIN, and the
   * fill every WANT_READ leads to returns at once if bytes came meanwhile. */
  if (s->filling || s->rd_drained) {
    BIO_set_retry_read(b);
    return -1;
  }
  n = recv(s->fd, out, (size_t)len, MSG_DONTWAIT);
  if (n > 0) {
    s->rd_drained = n < len;
    return (int)n;
  }
  if (n == 0) {
    BIO_set_flags(b, BIO_FLAGS_IN_EOF);
    return 0;
  }
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
    s->rd_drained = 1;
    BIO_set_retry_read(b);
  }
  return -1;
}

/* A TLS 1.3 server writes its session tickets at the end of its handshake,
 * one send each. Nothing waits for them: a client reads them with the first
 * reply. So they are held and go out in one sendmsg before this socket next
 * waits for the peer (tb_sock_fill, and the poll of a write), or, when the
 * client's request came with its Finished, with the next record (the
 * reply, or close_notify): one syscall instead of two or three. Returns 1
 * when in was held. */
static int hold(tb_sock *s, const char *in, int len) {
  SSL *ssl = s->e ? s->e->ssl : NULL;
  if (!ssl || len <= 0 || SSL_get_state(ssl) != TLS_ST_SW_SESSION_TICKET ||
      SSL_version(ssl) != TLS1_3_VERSION || s->out_len + (size_t)len > TB_SOCK_HOLD)
    return 0;
  if (!s->out_buf && !(s->out_buf = tb_malloc(TB_SOCK_HOLD)))
    return 0; /* sent at once then */
  memcpy(s->out_buf + s->out_len, in, (size_t)len);
  s->out_len += (size_t)len;
  return 1;
}

/* The held bytes, then in (len may be 0), in one sendmsg. Returns how many
 * bytes of in went, or -1 with errno set; EAGAIN when only held bytes (or
 * part of them) went, which stay held to go first next time. */
static ssize_t send_held(tb_sock *s, const char *in, int len) {
  size_t held = s->out_len - s->out_off;
  struct iovec v[2] = {{s->out_buf + s->out_off, held}, {(void *)in, (size_t)len}};
  struct msghdr m = {.msg_iov = v, .msg_iovlen = len > 0 ? 2 : 1};
  ssize_t n = sendmsg(s->fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
  if (n < 0)
    return -1;
  if ((size_t)n < held) {
    s->out_off += (size_t)n;
    errno = EAGAIN;
    return -1;
  }
  s->out_off = s->out_len = 0;
  if ((size_t)n == held && len > 0) {
    errno = EAGAIN;
    return -1;
  }
  return n - (ssize_t)held;
}

void tb_sock_flush_held(tb_sock *s) {
  if (s->out_len > s->out_off)
    (void)send_held(s, NULL, 0); /* what the kernel does not take goes with the next record */
}

static int sock_bio_write(BIO *b, const char *in, int len) {
  tb_sock *s = BIO_get_data(b);
  ssize_t n;
  BIO_clear_retry_flags(b);
  if (hold(s, in, len))
    return len;
  if (s->out_len > s->out_off)
    n = send_held(s, in, len);
  else
    n = send(s->fd, in, (size_t)len, MSG_DONTWAIT | MSG_NOSIGNAL);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
    BIO_set_retry_write(b);
  /* A handshake flight just sent is answered only after the peer has read
   * it: the read that follows would find nothing. */
  if (n > 0 && s->e && !(s->e->flags & TB_F_HS_DONE))
    s->rd_drained = 1;
  return (int)n;
}

static long sock_bio_ctrl(BIO *b, int cmd, long num, void *ptr) {
  tb_sock *s = BIO_get_data(b);
  (void)num;
  switch (cmd) {
  case BIO_CTRL_FLUSH:
    return 1;
  case BIO_C_GET_FD: /* SSL_get_fd */
    if (ptr)
      *(int *)ptr = s->fd;
    return s->fd;
  case BIO_CTRL_EOF:
    return BIO_test_flags(b, BIO_FLAGS_IN_EOF) != 0;
  default:
    return 0;
  }
}

static BIO_METHOD *method;
static pthread_once_t method_once = PTHREAD_ONCE_INIT;

static void make_method(void) {
  BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK | BIO_TYPE_DESCRIPTOR,
                               "tlsbridge socket");
  if (m && BIO_meth_set_read(m, sock_bio_read) && BIO_meth_set_write(m, sock_bio_write) &&
      BIO_meth_set_ctrl(m, sock_bio_ctrl)) {
    method = m;
    return;
  }
  BIO_meth_free(m);
}

BIO *tb_sock_bio(tb_sock *s) {
  BIO *b;
  pthread_once(&method_once, make_method);
  if (!method)
    return NULL;
  if (!s->in_buf) {
    s->in_buf = tb_malloc(TB_SOCK_INBUF);
    if (!s->in_buf)
      return NULL;
  }
  b = BIO_new(method);
  if (!b)
    return NULL;
  BIO_set_data(b, s);
  BIO_set_init(b, 1);
  return b;
}

/* SO_RCVTIMEO follows the caller's timeout; only the filler touches it.
 * Returns 0, or the errno of a failed setsockopt: the old timeout would then
 * stay in force and a read could wait longer than asked, so the caller
 * fails the read instead. */
static int set_timeout(tb_sock *s, int64_t timeout_ms) {
  struct timeval tv;
  if (timeout_ms < 0)
    timeout_ms = 0;
  if (timeout_ms == s->rcvtimeo_ms)
    return 0;
  tv.tv_sec = (time_t)(timeout_ms / 1000);
  tv.tv_usec = (suseconds_t)(timeout_ms % 1000) * 1000;
  if (setsockopt(s->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0)
    return errno;
  s->rcvtimeo_ms = timeout_ms;
  return 0;
}

static int closed_err(tb_error *err) {
  tb_err_set(err, TB_ERR_SOCKET, "Socket closed");
  return -1;
}

int tb_sock_fill(tb_sock *s, int64_t timeout_ms, tb_error *err) {
  const struct timespec pause = {0, 1000000};
  ssize_t n;
  int e;
  pthread_mutex_lock(&s->mu);
  /* Only one thread receives at a time. A second one (a writer whose
   * SSL_write wants to read, rare after the handshake) waits for the first
   * one's bytes instead of racing it for the next ones. */
  while (s->filling) {
    pthread_mutex_unlock(&s->mu);
    nanosleep(&pause, NULL);
    if (atomic_load(&s->closed))
      return closed_err(err);
    pthread_mutex_lock(&s->mu);
  }
  if (s->in_len > s->in_off || s->in_err) {
    pthread_mutex_unlock(&s->mu);
    return 1;
  }
  /* The peer may be waiting for held tickets; they stay held only while
   * its request is already in (staged, or in OpenSSL's buffer). */
  tb_sock_flush_held(s);
  s->filling = 1;
  pthread_mutex_unlock(&s->mu);
  if (atomic_load(&s->closed)) {
    n = -1;
    e = 0;
  } else if ((e = set_timeout(s, timeout_ms)) != 0) {
    pthread_mutex_lock(&s->mu);
    s->filling = 0;
    pthread_mutex_unlock(&s->mu);
    return tb_sock_sys_fail(err, TB_ERR_SOCKET, "setsockopt(SO_RCVTIMEO)", e);
  } else {
    do
      n = recv(s->fd, s->in_buf, TB_SOCK_INBUF, 0);
    while (n < 0 && errno == EINTR && !atomic_load(&s->closed));
    e = n < 0 ? errno : 0;
  }
  pthread_mutex_lock(&s->mu);
  s->filling = 0;
  if (n > 0) {
    s->in_off = 0;
    s->in_len = (size_t)n;
    s->rd_drained = n < TB_SOCK_INBUF;
  } else if (n == 0) {
    s->rd_drained = 0; /* the BIO's own recv then sees the end of stream */
  } else if (e && e != EAGAIN && e != EWOULDBLOCK && e != EINTR) {
    s->in_err = e;
  }
  pthread_mutex_unlock(&s->mu);
  if (atomic_load(&s->closed))
    return closed_err(err);
  /* EAGAIN from a blocking descriptor is SO_RCVTIMEO expiring; the peer's
   * FIN (0) and errors are the next BIO read's to report */
  return n < 0 && (e == EAGAIN || e == EWOULDBLOCK) ? 0 : 1;
}
