/* A socket's lifetime: the descriptor, the close signal, the references
 * that keep both alive while any thread is inside a call, and the poll()
 * every wait but the one for input goes through (that one is a recv():
 * socket_bio.c). */
#include "socket.h"
#include "tb_alloc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

static tb_sock *sock_alloc(int fd, int family, tb_error *err) {
  tb_sock *s = tb_calloc(1, sizeof *s);
  if (!s) {
    tb_err_set(err, TB_ERR_MEMORY, "out of memory creating a socket");
    return NULL;
  }
  if (pthread_mutex_init(&s->mu, NULL) != 0) {
    tb_err_set(err, TB_ERR_MEMORY, "cannot create the socket's mutex");
    free(s);
    return NULL;
  }
  s->fd = fd;
  s->family = family;
  atomic_init(&s->refs, 1);
  atomic_init(&s->closed, 0);
  atomic_init(&s->released, 0);
  atomic_init(&s->shut_in, 0);
  atomic_init(&s->shut_out, 0);
  return s;
}

tb_sock *tb_sock_new(int family, tb_error *err) {
  int fd;
  tb_sock *s;
  if (family != AF_INET && family != AF_INET6) {
    tb_err_set(err, TB_ERR_ARGUMENT, "unsupported address family %d", family);
    return NULL;
  }
  fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    tb_sock_sys_fail(err, TB_ERR_SOCKET, "socket", errno);
    return NULL;
  }
  if (family == AF_INET6) {
    int off = 0; /* dual stack, as java.net does */
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
  }
  s = sock_alloc(fd, family, err);
  if (!s)
    close(fd);
  return s;
}

int tb_sock_sys_fail(tb_error *err, int kind, const char *what, int code) {
  tb_err_set(err, kind, "%s: %s", what, strerror(code));
  return -1;
}

tb_sock *tb_sock_wrap(int fd, int family, tb_error *err) {
  tb_sock *s = sock_alloc(fd, family, err);
  if (!s)
    close(fd);
  return s;
}

static void sock_release(tb_sock *s) {
  if (atomic_exchange(&s->released, 1))
    return;
  if (s->e && s->release_owner && s->e->owner)
    s->release_owner(s->e->owner);
  if (s->e)
    tb_engine_free(s->e); /* the socket BIO does not own the fd (BIO_NOCLOSE) */
  s->e = NULL;
  if (s->fd >= 0)
    close(s->fd);
  s->fd = -1;
  free(s->in_buf);
  s->in_buf = NULL;
  free(s->out_buf);
  s->out_buf = NULL;
  s->out_off = s->out_len = s->out_cap = 0;
  tb_seal_free(s->seal);
  s->seal = NULL;
}

void tb_sock_free(tb_sock *s) {
  if (!s)
    return;
  tb_sock_close(s);
  pthread_mutex_destroy(&s->mu);
  free(s);
}

int tb_sock_enter(tb_sock *s, tb_error *err) {
  atomic_fetch_add(&s->refs, 1);
  if (atomic_load(&s->closed)) {
    tb_sock_leave(s);
    tb_err_set(err, TB_ERR_SOCKET, "Socket closed");
    return -1;
  }
  return 0;
}

void tb_sock_leave(tb_sock *s) {
  if (atomic_fetch_sub(&s->refs, 1) == 1 && atomic_load(&s->closed))
    sock_release(s);
}

/* Marks the socket closed, wakes every thread waiting on it and drops the
 * owner's reference; the descriptor closes when the last caller leaves.
 * The wake is shutdown(2), which makes a poll on a connected, connecting or
 * listening TCP socket, and a recv on a connected one, return at once, as
 * it does for every later poll or recv: no
 * eventfd per socket (two syscalls to make and close it, a third to signal
 * it). When no other thread is inside a call there is no one to wake, and
 * a thread that enters later sees `closed` (both sides are seq_cst: either
 * this load sees its reference or its load sees closed). */
void tb_sock_close(tb_sock *s) {
  if (atomic_exchange(&s->closed, 1))
    return;
  if (atomic_load(&s->refs) > 1)
    shutdown(s->fd, SHUT_RDWR);
  tb_sock_leave(s);
}

uint64_t tb_deadline(int64_t timeout_ms) {
  return timeout_ms > 0 ? tb_now_ns() + (uint64_t)timeout_ms * 1000000u : 0;
}

int tb_sock_wait(tb_sock *s, int what, uint64_t deadline_ns, tb_error *err) {
  struct pollfd p;
  for (;;) {
    int ms = -1, rc;
    if (atomic_load(&s->closed)) {
      tb_err_set(err, TB_ERR_SOCKET, "Socket closed");
      return -1;
    }
    if (tb_sock_nowait())
      return tb_sock_blocked(err, what); /* the caller tried first: poll would only wait */
    if (deadline_ns) {
      uint64_t now = tb_now_ns();
      if (now >= deadline_ns)
        return 0;
      ms = (int)((deadline_ns - now + 999999u) / 1000000u);
    }
    p.fd = s->fd;
    p.events = (short)((what & TB_WAIT_READ ? POLLIN : 0) | (what & TB_WAIT_WRITE ? POLLOUT : 0));
    p.revents = 0;
    rc = poll(&p, 1, ms);
    if (rc < 0) {
      if (errno == EINTR)
        continue;
      return tb_sock_sys_fail(err, TB_ERR_SOCKET, "poll", errno);
    }
    if (atomic_load(&s->closed)) {
      tb_err_set(err, TB_ERR_SOCKET, "Socket closed");
      return -1;
    }
    if (p.revents)
      return 1; /* errors and hang-ups too: the next call reports them */
  }
}
