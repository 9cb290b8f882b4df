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
 * server's tickets wait in the BIO for the next record (see holds). Once
 * OpenSSL hands over the sending keys, the BIO is given each record's
 * plaintext from the caller's memory and seals it into its output queue
 * (seal.c): one pass over the bytes instead of OpenSSL's copy into its
 * record buffer, its sealing there and the send. */
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
  if (s->bio_reads_ahead) {
    /* OpenSSL asks for a record's header and then its body (see
     * tb_sock_attach): whatever the kernel has, in one recv() into the input
     * buffer, serves both */
    n = recv(s->fd, s->in_buf, TB_SOCK_INBUF, MSG_DONTWAIT);
    if (n > 0) {
      s->rd_drained = n < TB_SOCK_INBUF;
      s->in_off = 0;
      s->in_len = (size_t)n;
      return take_staged(s, out, len);
    }
  } else {
    n = recv(s->fd, out, (size_t)len, MSG_DONTWAIT);
    if (n > 0) {
      s->rd_drained = n < len;
      return (int)n;
    }
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
 * reply, or close_notify): one syscall instead of two or three. 1 when a
 * record of len bytes is to be held. */
static int holds(tb_sock *s, size_t len) {
  SSL *ssl = s->e ? s->e->ssl : NULL;
  return ssl && SSL_get_state(ssl) == TLS_ST_SW_SESSION_TICKET && SSL_version(ssl) == TLS1_3_VERSION &&
         s->out_len - s->out_off + len <= TB_SOCK_HOLD;
}

/* Room for n more bytes at the end of the output queue, or NULL (out of
 * memory). */
static uint8_t *queue_reserve(tb_sock *s, size_t n) {
  uint8_t *p;
  size_t cap;
  if (s->out_cap - s->out_len >= n)
    return s->out_buf + s->out_len;
  if (s->out_off > 0) {
    memmove(s->out_buf, s->out_buf + s->out_off, s->out_len - s->out_off);
    s->out_len -= s->out_off;
    s->out_off = 0;
    if (s->out_cap - s->out_len >= n)
      return s->out_buf + s->out_len;
  }
  cap = s->out_len + n < TB_SOCK_HOLD ? TB_SOCK_HOLD : s->out_len + n;
  if (!(p = tb_realloc(s->out_buf, cap)))
    return NULL;
  s->out_buf = p;
  s->out_cap = cap;
  return p + s->out_len;
}

static int would_block(void) {
  return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
}

/* The queued bytes, then in (len may be 0), in one sendmsg. Returns how
 * many bytes of in went, or -1 with errno set; EAGAIN when only queued bytes
 * (or part of them) went, the rest staying queued to go first next time. */
static ssize_t send_queued(tb_sock *s, const char *in, size_t len) {
  size_t queued = s->out_len - s->out_off;
  struct iovec v[2] = {{s->out_buf + s->out_off, queued}, {(void *)in, len}};
  struct msghdr m = {.msg_iov = v, .msg_iovlen = len > 0 ? 2 : 1};
  ssize_t n = sendmsg(s->fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
  if (n < 0) {
    if (!would_block())
      s->wr_err = errno ? errno : EIO;
    return -1;
  }
  s->sent += (uint64_t)n;
  if ((size_t)n < queued) {
    s->out_off += (size_t)n;
    errno = EAGAIN;
    return -1;
  }
  s->out_off = s->out_len = 0;
  if ((size_t)n == queued && len > 0) {
    errno = EAGAIN;
    return -1;
  }
  return n - (ssize_t)queued;
}

int tb_sock_flush_out(tb_sock *s) {
  if (s->wr_err) {
    errno = s->wr_err;
    return -1;
  }
  if (s->out_len == s->out_off)
    return 0;
  if (send_queued(s, NULL, 0) == 0)
    return 0;
  return would_block() ? 1 : -1;
}

/* A handshake flight just sent is answered only after the peer has read
 * it: the read that follows would find nothing. */
static void sent_flight(tb_sock *s) {
  if (s->e && !(s->e->flags & TB_F_HS_DONE))
    s->rd_drained = 1;
}

/* One record's plaintext, once OpenSSL has handed over the sending keys:
 * sealed into the queue and sent from there (or held, for tickets). The
 * record is the BIO's from then on, so this never asks OpenSSL to retry:
 * OpenSSL 3.5 would retry from the buffer it first passed, which the
 * caller only pins for the length of one call. What the kernel does not
 * take now stays queued; tb_sock_write waits for it before it returns. */
static int seal_write(tb_sock *s, const char *in, int len) {
  size_t rec = tb_seal_len(s->seal, (size_t)len);
  uint64_t before = s->sent;
  int hold = holds(s, rec);
  uint8_t *at = queue_reserve(s, rec);
  if (!at) {
    errno = ENOMEM;
    return -1;
  }
  if (!tb_seal_record(s->seal, (const uint8_t *)in, (size_t)len, at)) {
    s->wr_err = errno = EIO;
    return -1;
  }
  s->out_len += rec;
  if (hold)
    return len;
  if (tb_sock_flush_out(s) < 0)
    return -1;
  if (s->sent != before)
    sent_flight(s);
  return len;
}

static int sock_bio_write(BIO *b, const char *in, int len) {
  tb_sock *s = BIO_get_data(b);
  ssize_t n;
  uint8_t *at;
  BIO_clear_retry_flags(b);
  if (len <= 0)
    return 0;
  /* After a hard failure OpenSSL may still write: its alert, or (3.5) the
   * failed record again from the buffer it first passed, which the caller
   * pinned for that call only. Neither is read, and nothing is sent. */
  if (s->wr_err || tb_seal_failed(s->seal)) {
    errno = s->wr_err ? s->wr_err : EIO;
    return -1;
  }
  if (s->seal)
    return seal_write(s, in, len);
  if (holds(s, (size_t)len) && (at = queue_reserve(s, (size_t)len)) != NULL) {
    memcpy(at, in, (size_t)len);
    s->out_len += (size_t)len;
    return len;
  }
  if (s->out_len > s->out_off) {
    n = send_queued(s, in, (size_t)len);
  } else {
    n = send(s->fd, in, (size_t)len, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n > 0)
      s->sent += (uint64_t)n;
    else if (n < 0 && !would_block())
      s->wr_err = errno ? errno : EIO;
  }
  if (n < 0 && would_block())
    BIO_set_retry_write(b);
  if (n > 0)
    sent_flight(s);
  return (int)n;
}

static long sock_bio_ctrl(BIO *b, int cmd, long num, void *ptr) {
  tb_sock *s = BIO_get_data(b);
  /* asked several times per record by OpenSSL 3.0's record layer */
  if (cmd == BIO_CTRL_GET_KTLS_SEND)
    return s->seal != NULL;
  switch (cmd) {
  case BIO_CTRL_FLUSH:
    return 1;
  case BIO_C_GET_FD: /* SSL_get_fd */
    if (ptr)
      *(int *)ptr = s->fd;
    return s->fd;
  case BIO_CTRL_EOF:
    return BIO_test_flags(b, BIO_FLAGS_IN_EOF) != 0;
  case TB_BIO_CTRL_SET_KTLS:
    return tb_seal_set_key(&s->seal, num, ptr);
  case TB_BIO_CTRL_SET_KTLS_TX_SEND_CTRL_MSG:
    tb_seal_set_type(s->seal, (int)num);
    return 1;
  case TB_BIO_CTRL_CLEAR_KTLS_TX_CTRL_MSG:
    tb_seal_set_type(s->seal, SSL3_RT_APPLICATION_DATA);
    return 1;
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
  uint64_t deadline = 0;
  ssize_t n;
  int e;
  for (;;) {
    pthread_mutex_lock(&s->mu);
    /* Only one thread receives at a time. A second one (a writer whose
     * SSL_write wants to read, rare after the handshake) waits for the
     * first one's bytes instead of racing it for the next ones. */
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
    /* The peer may be waiting for what is queued: held tickets (held only
     * while its request is already in), or a record sealed in a handshake
     * or a read that the kernel did not take at once. A failed send is
     * left for the recv below, or the next write, to report. */
    if (tb_sock_flush_out(s) != 1)
      break;
    pthread_mutex_unlock(&s->mu);
    if (!deadline && timeout_ms > 0)
      deadline = tb_deadline(timeout_ms);
    if ((e = tb_sock_wait(s, TB_WAIT_WRITE, deadline, err)) <= 0)
      return e;
  }
  s->filling = 1;
  pthread_mutex_unlock(&s->mu);
  if (atomic_load(&s->closed)) {
    n = -1;
    e = 0;
  } else if (tb_sock_nowait()) {
    /* the caller waits for input itself (socket_park.c) */
    do
      n = recv(s->fd, s->in_buf, TB_SOCK_INBUF, MSG_DONTWAIT);
    while (n < 0 && errno == EINTR && !atomic_load(&s->closed));
    e = n < 0 ? errno : 0;
    if (n < 0 && (e == EAGAIN || e == EWOULDBLOCK)) {
      pthread_mutex_lock(&s->mu);
      s->filling = 0;
      pthread_mutex_unlock(&s->mu);
      return atomic_load(&s->closed) ? closed_err(err) : tb_sock_blocked(err, TB_WAIT_READ);
    }
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
