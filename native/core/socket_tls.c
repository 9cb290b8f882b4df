/* TLS on a socket's own descriptor: OpenSSL reads and writes the fd itself
 * through socket_bio.c, so the only user-space copies per direction are
 * OpenSSL's own (record buffer <-> caller memory) and, for bytes that came
 * in while a thread waited, the input buffer's. Each OpenSSL call runs under
 * the socket's mutex and never waits; waiting is tb_sock_fill or
 * tb_sock_wait, outside the mutex, so a reader and a writer can both be
 * blocked at once. */
#include "socket.h"
#include "trace.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <time.h>
#include <openssl/err.h>

/* Waits for what OpenSSL asked of the peer, outside the mutex: input in the
 * one blocking recv() (tb_sock_fill), room to write in a poll(). The timeout
 * (0: none) applies to each wait, as SO_TIMEOUT does. */
static int await_peer(tb_sock *s, int what, int64_t timeout_ms, tb_error *err) {
  if (what == TB_WAIT_READ)
    return tb_sock_fill(s, timeout_ms, err);
  pthread_mutex_lock(&s->mu);
  (void)tb_sock_flush_out(s);
  pthread_mutex_unlock(&s->mu);
  return tb_sock_wait(s, what, tb_deadline(timeout_ms), err);
}

int tb_sock_attach(tb_sock *s, SSL_CTX *ctx, int client, tb_error *err) {
  tb_engine *e;
  BIO *b;
  if (s->e) {
    tb_err_set(err, TB_ERR_STATE, "TLS is already attached to this socket");
    return -1;
  }
  e = tb_engine_new(ctx, client, err);
  if (!e)
    return -1;
  /* replaces the engine's memory BIOs; the socket BIO does not own fd */
  b = tb_sock_bio(s);
  if (!b) {
    tb_err_set(err, TB_ERR_MEMORY, "out of memory attaching TLS to a socket");
    tb_engine_free(e);
    return -1;
  }
  /* The socket BIO takes the sending keys too (SSL_OP_ENABLE_KTLS, from
   * the context) and seals what it sends. */
  SSL_set_bio(e->ssl, b, b);
  e->flags |= TB_F_SOCKET;
  SSL_set_mode(e->ssl, SSL_MODE_AUTO_RETRY);
  /* One recv() takes whatever the kernel has, whole records or several,
   * instead of a header and then a body: one syscall less per record. Where
   * OpenSSL offers the BIO its keys (SSL_OP_ENABLE_KTLS), the BIO reads
   * ahead into the socket's input buffer and OpenSSL reads each record's
   * header and body from there, so OpenSSL's own buffer never holds bytes
   * past the record it is reading: with its read-ahead on, OpenSSL 3.5 loses
   * those bytes when it changes the receiving key (the peer's KeyUpdate,
   * TLS 1.2's ChangeCipherSpec). It first offers the key to the BIO, which
   * declines, and its retry with its own record layer reads from a fresh
   * buffer while the old layer's leftover goes to the one the declined
   * attempt dropped (ssl_set_new_record_layer in rec_layer_s3.c;
   * tests/native/test_socket_seal.c fails with OpenSSL reading ahead).
   * Elsewhere OpenSSL reads ahead itself, straight into its buffer. */
  s->bio_reads_ahead = (SSL_get_options(e->ssl) & SSL_OP_ENABLE_KTLS) != 0;
  SSL_set_read_ahead(e->ssl, !s->bio_reads_ahead);
  /* A server's first read is the fill's: the ClientHello in one recv(),
   * not a 5-byte header read that usually finds nothing yet (EAGAIN). */
  s->rd_drained = !client;
  s->e = e;
  return 0;
}

static void lock(tb_sock *s) { pthread_mutex_lock(&s->mu); }
static void unlock(tb_sock *s) { pthread_mutex_unlock(&s->mu); }

static int closed_err(tb_sock *s, tb_error *err) {
  if (!atomic_load(&s->closed))
    return 0;
  tb_err_set(err, TB_ERR_SOCKET, "Socket closed");
  return 1;
}

/* Mutex held. The BIO counts record bytes sent itself: once it seals,
 * OpenSSL hands it plaintext, and it holds records back. */
static void count_io(tb_sock *s, tb_engine *e) {
  e->stats.bytes_in = BIO_number_read(SSL_get_rbio(e->ssl));
  e->stats.bytes_out = s->sent;
  e->stats.calls++;
}

/* Takes a reference and returns the engine, or NULL (err set). */
static tb_engine *enter_tls(tb_sock *s, tb_error *err) {
  if (tb_sock_enter(s, err) < 0)
    return NULL;
  if (!s->e) {
    tb_sock_leave(s);
    tb_err_set(err, TB_ERR_STATE, "no TLS on this socket");
  }
  return s->e;
}

int tb_sock_handshake(tb_sock *s, int64_t timeout_ms, void *glue, tb_error *err) {
  tb_engine *e = enter_tls(s, err);
  int rc = -1;
  if (!e)
    return -1;
  e->glue = glue;
  for (;;) {
    int step, what, w;
    lock(s);
    if (closed_err(s, err)) {
      unlock(s);
      break;
    }
    if (e->flags & TB_F_HS_DONE) {
      unlock(s);
      rc = 0;
      break;
    }
    if (e->flags & TB_F_FAILED) {
      *err = e->err;
      unlock(s);
      break;
    }
    step = tb_hs_step(e);
    what = SSL_want_write(e->ssl) ? TB_WAIT_WRITE : TB_WAIT_READ;
    count_io(s, e);
    if (step < 0) {
      e->error_pending = 0;
      if (!closed_err(s, err))
        *err = e->err;
    }
    unlock(s);
    if (step == 1) {
      rc = 0;
      break;
    }
    if (step == 2) {
      rc = e->task;
      break;
    }
    if (step < 0)
      break;
    w = await_peer(s, what, timeout_ms, err);
    if (w < 0)
      break;
    if (w == 0) {
      tb_err_set(err, TB_ERR_TIMEOUT, "Read timed out during the TLS handshake");
      break;
    }
  }
  e->glue = NULL;
  tb_sock_leave(s);
  return rc;
}

/* The descriptor failed under a read or a write. */
static void sys_failure(int saved_errno, int reading, tb_error *err) {
  if (saved_errno == ECONNRESET)
    tb_err_set(err, TB_ERR_SOCKET, "Connection reset");
  else if (saved_errno == EPIPE)
    tb_err_set(err, TB_ERR_SOCKET, "Broken pipe");
  else
    tb_err_set(err, TB_ERR_SOCKET, "%s: %s", reading ? "read" : "write",
               saved_errno ? strerror(saved_errno) : "unexpected end of stream");
}

/* An OpenSSL failure after the handshake: 1 means "treat as end of stream"
 * (the peer closed without close_notify, which SunJSSE also accepts by
 * default), 0 means err now holds the error. Mutex held. */
static int io_failure(tb_sock *s, int se, int saved_errno, int reading, tb_error *err) {
  unsigned long code = ERR_peek_error();
  /* close() on another thread shut the descriptor down under this call */
  if (closed_err(s, err)) {
    tb_err_reset();
    return 0;
  }
  if (se == SSL_ERROR_ZERO_RETURN) {
    s->e->flags |= TB_F_PEER_CLOSED;
    return 1;
  }
  if (se == SSL_ERROR_SSL && ERR_GET_REASON(code) == SSL_R_UNEXPECTED_EOF_WHILE_READING && reading) {
    tb_err_reset();
    return 1;
  }
  if (se == SSL_ERROR_SYSCALL && code == 0) {
    if (saved_errno == 0 && reading)
      return 1;
    sys_failure(saved_errno, reading, err);
    return 0;
  }
  /* the send that failed under OpenSSL's write: its errno says more than
   * the queue's system-library entry */
  if (s->wr_err && !reading && !tb_seal_failed(s->seal)) {
    tb_err_reset();
    sys_failure(s->wr_err, 0, err);
    return 0;
  }
  tb_err_from_openssl(err, TB_ERR_SSL, reading ? "cannot read TLS record" : "cannot write TLS record");
  return 0;
}

/* A write that failed for good (a send error, a record or key change the
 * BIO could not seal, OpenSSL's fatal error) ends the sending side: OpenSSL
 * is not called to write again, since 3.5 would first retry the failed
 * record from the buffer the caller pinned for that call only. Later
 * writes, and reads that would have OpenSSL write, say what failed. Mutex
 * held. */
static void fail_sending(tb_engine *e, const tb_error *err) {
  if (e->flags & TB_F_FAILED)
    return;
  e->flags |= TB_F_FAILED;
  e->err = *err;
}

static void failed_before(tb_engine *e, tb_error *err) {
  tb_err_set(err, TB_ERR_SSL, "cannot write TLS record: the connection failed earlier: %s", e->err.msg);
}

/* A TLS 1.3 server may ask for the client's certificate at any time after
 * the handshake (post-handshake authentication). SSL_read meets the
 * CertificateRequest and parks on the same callbacks as the handshake; the
 * parked question is the reader's to answer in Java (TB_SOCK_TASK). Returns
 * the task, or 0 when se is not such a park. Mutex held. */
static int parked_task(tb_engine *e, int se) {
  if (se == SSL_ERROR_WANT_X509_LOOKUP)
    e->task = TB_TASK_CERT;
  else if (se == SSL_ERROR_WANT_RETRY_VERIFY)
    e->task = TB_TASK_VERIFY;
  else
    return 0;
  return e->task;
}

/* A writer that finds a post-handshake task pending waits for the reader,
 * which is answering it in Java, instead of entering OpenSSL meanwhile: the
 * task changes the SSL's certificate, and an SSL_write would only park again.
 * The task takes milliseconds; close ends the wait at once. */
static int await_task(tb_sock *s, tb_engine *e, tb_error *err) {
  const struct timespec pause = {0, 2000000};
  for (;;) {
    int pending;
    lock(s);
    pending = e->task != TB_TASK_NONE;
    unlock(s);
    if (closed_err(s, err))
      return -1;
    if (!pending)
      return 0;
    nanosleep(&pause, NULL);
  }
}

/* Locks the socket for one OpenSSL call and maps the caller's memory; NULL
 * (and unlocked) when the socket is closed (err set) or the memory cannot be
 * mapped (err cleared: the glue's exception is already pending). */
static uint8_t *begin_call(tb_sock *s, tb_pin_fn pin, void *arg, tb_error *err) {
  uint8_t *p;
  lock(s);
  if (closed_err(s, err)) {
    unlock(s);
    return NULL;
  }
  p = pin(arg);
  if (!p) {
    unlock(s);
    tb_err_clear(err);
  }
  return p;
}

/* Whether a read should wait for input before calling OpenSSL: the kernel
 * had nothing left at the last recv(), nothing is staged, and OpenSSL holds
 * no bytes of its own (a record it has decrypted and not handed out yet,
 * or the part of one that came: waiting then could block for good). The
 * BIO would refuse to read then too (no recv() that fails with EAGAIN on
 * every keep-alive request); asking first saves the SSL_read that would
 * only say so. */
static int wait_first(tb_sock *s, tb_engine *e) {
  int r;
  lock(s);
  r = s->rd_drained && s->in_len == s->in_off && !s->in_err && !SSL_has_pending(e->ssl) &&
      !atomic_load(&s->closed);
  unlock(s);
  return r;
}

long tb_sock_read(tb_sock *s, tb_pin_fn pin, tb_unpin_fn unpin, void *arg, size_t len, int64_t timeout_ms,
                  tb_error *err) {
  long out = TB_SOCK_ERR;
  int waited = 0;
  tb_engine *e;
  if (len == 0)
    return 0;
  if (len > INT_MAX)
    len = INT_MAX;
  e = enter_tls(s, err);
  if (!e)
    return TB_SOCK_ERR;
  for (;;) {
    size_t n = 0;
    int ok, se = 0, saved = 0, w, eof = 0, task = 0;
    uint8_t *p;
    uint64_t t0;
    if (atomic_load(&s->shut_in)) {
      out = TB_SOCK_EOF;
      break;
    }
    if (!waited && wait_first(s, e)) {
      waited = 1;
      w = tb_sock_fill(s, timeout_ms, err);
      if (w < 0)
        break;
      if (w == 0) {
        tb_err_set(err, TB_ERR_TIMEOUT, "Read timed out");
        break;
      }
      continue;
    }
    p = begin_call(s, pin, arg, err);
    if (!p)
      break;
    tb_err_reset_shared();
    errno = 0;
    t0 = tb_io_clock();
    ok = SSL_read_ex(e->ssl, p, len, &n);
    saved = errno;
    unpin(arg, p, ok);
    tb_io_clock_add(&e->stats.ns_read, t0);
    count_io(s, e);
    /* the peer asked us to re-key: OpenSSL sends our KeyUpdate before the
     * next byte of ours, so the new write key's count starts now */
    if (SSL_get_key_update_type(e->ssl) != SSL_KEY_UPDATE_NONE)
      e->key_left = e->key_limit;
    if (ok) {
      e->stats.app_in += n;
      e->stats.records_in++;
    } else {
      se = tb_ssl_error(e->ssl, 0);
      task = parked_task(e, se);
      if (!task && se != SSL_ERROR_WANT_READ && se != SSL_ERROR_WANT_WRITE) {
        eof = io_failure(s, se, saved, 1, err);
        /* OpenSSL's connection is dead, or its write side (a KeyUpdate
         * answered with a key the BIO could not take) */
        if (!eof && (se == SSL_ERROR_SSL || s->wr_err) && !atomic_load(&s->closed))
          fail_sending(e, err);
      }
    }
    unlock(s);
    if (ok) {
      out = (long)n;
      break;
    }
    if (task) {
      tb_err_reset();
      out = TB_SOCK_TASK(task);
      break;
    }
    if (se != SSL_ERROR_WANT_READ && se != SSL_ERROR_WANT_WRITE) {
      if (eof || atomic_load(&s->shut_in))
        out = TB_SOCK_EOF;
      break;
    }
    w = await_peer(s, se == SSL_ERROR_WANT_WRITE ? TB_WAIT_WRITE : TB_WAIT_READ, timeout_ms, err);
    if (w < 0)
      break;
    if (w == 0) {
      tb_err_set(err, TB_ERR_TIMEOUT, "Read timed out");
      break;
    }
  }
  tb_sock_leave(s);
  return out;
}

/* Waits until the kernel has taken every record the BIO sealed: a write
 * returns once its bytes are on their way, as it does when OpenSSL keeps
 * the record the kernel did not take and is asked again. */
static int drain_out(tb_sock *s, tb_error *err) {
  for (;;) {
    int rc, saved;
    lock(s);
    if (closed_err(s, err)) {
      unlock(s);
      return -1;
    }
    rc = tb_sock_flush_out(s);
    saved = errno;
    s->e->stats.bytes_out = s->sent;
    if (rc < 0) {
      sys_failure(saved, 0, err);
      fail_sending(s->e, err);
    }
    unlock(s);
    if (rc == 0)
      return 0;
    if (rc < 0)
      return -1;
    if (tb_sock_wait(s, TB_WAIT_WRITE, 0, err) < 0)
      return -1;
  }
}

long tb_sock_write(tb_sock *s, tb_pin_fn pin, tb_unpin_fn unpin, void *arg, size_t len, tb_error *err) {
  size_t done = 0;
  tb_engine *e = enter_tls(s, err);
  if (!e)
    return TB_SOCK_ERR;
  if (len == 0 && tb_sock_nowait()) {
    /* a no-wait write called again to send what the kernel did not take */
    long r = drain_out(s, err) < 0 && err->kind != TB_ERR_BLOCKED ? TB_SOCK_ERR : 0;
    tb_sock_leave(s);
    return r;
  }
  while (done < len) {
    size_t n = 0, chunk = len - done > INT_MAX ? INT_MAX : len - done;
    int ok, se = 0, saved, w, queued = 0;
    uint8_t *p;
    uint64_t t0;
    if (atomic_load(&s->shut_out)) {
      tb_err_set(err, TB_ERR_SOCKET, "Socket output is shutdown");
      break;
    }
    p = begin_call(s, pin, arg, err);
    if (!p)
      break;
    if (e->flags & TB_F_FAILED) {
      unpin(arg, p, 0);
      failed_before(e, err);
      unlock(s);
      break;
    }
    if (e->task != TB_TASK_NONE) {
      unpin(arg, p, 0);
      unlock(s);
      if (await_task(s, e, err) < 0)
        break;
      continue;
    }
    /* A sealing BIO queues what the kernel does not take: one record per
     * call keeps the queue at one record, however long the write. */
    if (s->seal && chunk > SSL3_RT_MAX_PLAIN_LENGTH)
      chunk = SSL3_RT_MAX_PLAIN_LENGTH;
    if (chunk > e->key_left) {
      chunk = tb_key_budget(e, chunk);
      if (chunk == 0) {
        unpin(arg, p, 0);
        *err = e->err;
        unlock(s);
        break;
      }
    }
    tb_err_reset_shared();
    errno = 0;
    t0 = tb_io_clock();
    /* after WANT_WRITE the same length is offered again; the address may
     * differ (SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER on every context) */
    ok = SSL_write_ex(e->ssl, p + done, chunk, &n);
    saved = errno;
    unpin(arg, p, 0);
    tb_io_clock_add(&e->stats.ns_write, t0);
    count_io(s, e);
    if (ok) {
      e->key_left -= n;
      e->stats.app_out += n;
      e->stats.records_out++;
      done += n;
      queued = s->out_len > s->out_off;
    } else {
      se = tb_ssl_error(e->ssl, 0);
      /* a park here means a reader is answering a request: wait for it */
      if (!parked_task(e, se) && se != SSL_ERROR_WANT_READ && se != SSL_ERROR_WANT_WRITE &&
          !io_failure(s, se, saved, 0, err) && !atomic_load(&s->closed))
        fail_sending(e, err);
    }
    unlock(s);
    if (ok && queued && drain_out(s, err) < 0)
      break;
    if (ok)
      continue;
    if (se == SSL_ERROR_WANT_X509_LOOKUP || se == SSL_ERROR_WANT_RETRY_VERIFY) {
      tb_err_reset();
      if (await_task(s, e, err) < 0)
        break;
      continue;
    }
    if (se != SSL_ERROR_WANT_READ && se != SSL_ERROR_WANT_WRITE)
      break;
    w = await_peer(s, se == SSL_ERROR_WANT_READ ? TB_WAIT_READ : TB_WAIT_WRITE, 0, err);
    if (w < 0)
      break;
  }
  tb_sock_leave(s);
  /* blocked (no-wait): how far it got; the caller waits and writes the rest */
  return done == len || err->kind == TB_ERR_BLOCKED ? (long)done : TB_SOCK_ERR;
}

int tb_sock_pending(tb_sock *s) {
  tb_error err;
  int n = 0;
  tb_engine *e = enter_tls(s, &err);
  if (!e)
    return 0;
  lock(s);
  n = SSL_pending(e->ssl);
  unlock(s);
  tb_sock_leave(s);
  return n;
}

void tb_sock_close_notify(tb_sock *s) {
  tb_error err;
  struct timespec until;
  tb_engine *e = enter_tls(s, &err);
  if (!e)
    return;
  /* A handshake callback into Java may hold the mutex for a while; close
   * must not hang behind it, so close_notify is skipped then. */
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_nsec += 250000000L;
  if (until.tv_nsec >= 1000000000L) {
    until.tv_sec++;
    until.tv_nsec -= 1000000000L;
  }
  if (pthread_mutex_timedlock(&s->mu, &until) == 0) {
    if ((e->flags & TB_F_HS_DONE) && !(e->flags & (TB_F_OUT_CLOSING | TB_F_FAILED)) &&
        !atomic_load(&s->shut_out)) {
      e->flags |= TB_F_OUT_CLOSING;
      tb_err_reset();
      SSL_shutdown(e->ssl); /* non-blocking: whatever the kernel takes now */
      tb_err_reset();
      count_io(s, e);
    }
    unlock(s);
  }
  tb_sock_leave(s);
}

int tb_sock_key_update(tb_sock *s, tb_error *err) {
  int rc;
  tb_engine *e = enter_tls(s, err);
  if (!e)
    return -1;
  lock(s);
  rc = tb_engine_begin(e);
  if (rc < 0)
    *err = e->err;
  unlock(s);
  tb_sock_leave(s);
  return rc;
}
