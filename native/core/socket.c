/* A socket's lifetime: the descriptor, the close signal, the references
 * that keep both alive while any thread is inside a call, and the one wait
 * every blocking operation goes through. */
#include "socket.h"
#include "tb_alloc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

static tb_sock *sock_alloc(int fd, int family, tb_error *err) {
  tb_sock *s = tb_calloc(1, sizeof *s);
  if (!s) {
    tb_err_set(err, TB_ERR_MEMORY, "out of memory creating a socket");
    return NULL;
  }
  s->wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (s->wake < 0) {
    tb_err_set(err, TB_ERR_SOCKET, "eventfd: %s", strerror(errno));
    free(s);
    return NULL;
  }
  if (pthread_mutex_init(&s->mu, NULL) != 0) {
    tb_err_set(err, TB_ERR_MEMORY, "cannot create the socket's mutex");
    close(s->wake);
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
    tb_err_set(err, TB_ERR_SOCKET, "socket: %s", strerror(errno));
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
  close(s->wake);
  s->wake = -1;
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
 * owner's reference; the descriptor closes when the last caller leaves. */
void tb_sock_close(tb_sock *s) {
  uint64_t one = 1;
  if (atomic_exchange(&s->closed, 1))
    return;
  while (write(s->wake, &one, sizeof one) < 0 && errno == EINTR) {
  }
  tb_sock_leave(s);
}

uint64_t tb_deadline(int64_t timeout_ms) {
  return timeout_ms > 0 ? tb_now_ns() + (uint64_t)timeout_ms * 1000000u : 0;
}

int tb_sock_wait(tb_sock *s, int what, uint64_t deadline_ns, tb_error *err) {
  struct pollfd p[2];
  for (;;) {
    int ms = -1, rc;
    if (atomic_load(&s->closed)) {
      tb_err_set(err, TB_ERR_SOCKET, "Socket closed");
      return -1;
    }
    if (deadline_ns) {
      uint64_t now = tb_now_ns();
      if (now >= deadline_ns)
        return 0;
      ms = (int)((deadline_ns - now + 999999u) / 1000000u);
    }
    p[0].fd = s->fd;
    p[0].events = (short)((what & TB_WAIT_READ ? POLLIN : 0) | (what & TB_WAIT_WRITE ? POLLOUT : 0));
    p[0].revents = 0;
    p[1].fd = s->wake;
    p[1].events = POLLIN;
    p[1].revents = 0;
    rc = poll(p, 2, ms);
    if (rc < 0) {
      if (errno == EINTR)
        continue;
      tb_err_set(err, TB_ERR_SOCKET, "poll: %s", strerror(errno));
      return -1;
    }
    if (p[1].revents) {
      tb_err_set(err, TB_ERR_SOCKET, "Socket closed");
      return -1;
    }
    if (p[0].revents)
      return 1; /* errors and hang-ups too: the next call reports them */
  }
}
