/* The TCP half of a socket: bind, listen, accept and connect with poll()
 * timeouts, options and addresses. Every call holds a reference so a close
 * on another thread cannot pull the descriptor away mid-call. */
#include "socket.h"

#include <errno.h>
#include <poll.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

static socklen_t to_sockaddr(const tb_sock *s, const tb_addr *a, struct sockaddr_storage *ss) {
  memset(ss, 0, sizeof *ss);
  if (s->family == AF_INET6) {
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons((uint16_t)a->port);
    if (a->len == 16) {
      memcpy(&in6->sin6_addr, a->bytes, 16);
      in6->sin6_scope_id = a->scope;
    } else if (a->len == 4) { /* IPv4 through a dual-stack socket */
      in6->sin6_addr.s6_addr[10] = 0xff;
      in6->sin6_addr.s6_addr[11] = 0xff;
      memcpy(&in6->sin6_addr.s6_addr[12], a->bytes, 4);
    }
    return sizeof *in6;
  } else {
    struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
    in4->sin_family = AF_INET;
    in4->sin_port = htons((uint16_t)a->port);
    if (a->len == 4)
      memcpy(&in4->sin_addr, a->bytes, 4);
    return sizeof *in4;
  }
}

static void from_sockaddr(const struct sockaddr_storage *ss, tb_addr *a) {
  memset(a, 0, sizeof *a);
  if (ss->ss_family == AF_INET6) {
    const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;
    memcpy(a->bytes, &in6->sin6_addr, 16);
    a->len = 16;
    a->port = ntohs(in6->sin6_port);
    a->scope = in6->sin6_scope_id;
  } else if (ss->ss_family == AF_INET) {
    const struct sockaddr_in *in4 = (const struct sockaddr_in *)ss;
    memcpy(a->bytes, &in4->sin_addr, 4);
    a->len = 4;
    a->port = ntohs(in4->sin_port);
  }
}

int tb_sock_bind(tb_sock *s, const tb_addr *a, int reuse, tb_error *err) {
  struct sockaddr_storage ss;
  socklen_t len = to_sockaddr(s, a, &ss);
  int rc = 0;
  if (a->len == 16 && s->family == AF_INET) {
    tb_err_set(err, TB_ERR_ARGUMENT, "an IPv6 address on an IPv4 socket");
    return -1;
  }
  if (tb_sock_enter(s, err) < 0)
    return -1;
  if (reuse)
    setsockopt(s->fd, SOL_SOCKET, SO_REUSEADDR, &reuse, sizeof reuse);
  if (bind(s->fd, (struct sockaddr *)&ss, len) < 0)
    rc = tb_sock_sys_fail(err, errno == EADDRINUSE || errno == EADDRNOTAVAIL || errno == EACCES ? TB_ERR_BIND
                                                                                        : TB_ERR_SOCKET,
                  "bind", errno);
  tb_sock_leave(s);
  return rc;
}

int tb_sock_listen(tb_sock *s, int backlog, tb_error *err) {
  int rc = 0;
  if (tb_sock_enter(s, err) < 0)
    return -1;
  if (listen(s->fd, backlog > 0 ? backlog : 50) < 0)
    rc = tb_sock_sys_fail(err, TB_ERR_SOCKET, "listen", errno);
  tb_sock_leave(s);
  return rc;
}

static int any_address(const tb_addr *a) {
  static const uint8_t zero[16];
  return memcmp(a->bytes, zero, (size_t)a->len) == 0;
}

/* What getsockname and getpeername would say for a socket accept4 just
 * made, so that asking costs no syscalls: two per connection, for a server
 * that logs or checks who connected. */
static void name_accepted(tb_sock *l, tb_sock *c, const struct sockaddr_storage *peer) {
  from_sockaddr(peer, &c->names[1]);
  c->named = 2;
  pthread_mutex_lock(&l->mu);
  if (!l->local_known) {
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    memset(&ss, 0, sizeof ss);
    if (getsockname(l->fd, (struct sockaddr *)&ss, &len) == 0) {
      from_sockaddr(&ss, &l->names[0]);
      l->local_known = 1;
    }
  }
  /* a wildcard listener accepts on whichever address the client chose */
  if (l->local_known && !any_address(&l->names[0]) && l->names[0].len == c->names[1].len) {
    c->names[0] = l->names[0];
    c->named |= 1;
  }
  pthread_mutex_unlock(&l->mu);
}

/* A listener paced by its clients finds its queue empty at almost every
 * accept: accept4 (EAGAIN), poll, accept4 is three calls per connection.
 * After an accept that found the queue empty the next one polls first (two
 * calls); one whose poll returned at once (a connection was already queued,
 * as on a busy server) goes back to trying accept4 first (one call). */
#define ACCEPT_BUSY_NS 20000u

tb_sock *tb_sock_accept(tb_sock *s, int64_t timeout_ms, tb_error *err) {
  uint64_t deadline = tb_deadline(timeout_ms);
  tb_sock *out = NULL;
  /* no-wait: a wait returns to the caller, so try accept4 first */
  int poll_first = !tb_sock_nowait() && atomic_load_explicit(&s->accept_idle, memory_order_relaxed), idle = 0;
  if (tb_sock_enter(s, err) < 0)
    return NULL;
  for (;;) {
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    int fd, w;
    if (poll_first) {
      uint64_t t0 = tb_now_ns();
      poll_first = 0;
      w = tb_sock_wait(s, TB_WAIT_READ, deadline, err);
      if (w < 0)
        break;
      if (w == 0) {
        tb_err_set(err, TB_ERR_TIMEOUT, "Accept timed out");
        break;
      }
      idle = tb_now_ns() - t0 >= ACCEPT_BUSY_NS;
    }
    /* blocking: the wait for input is a recv() (socket_bio.c) */
    fd = accept4(s->fd, (struct sockaddr *)&ss, &len, SOCK_CLOEXEC);
    if (fd >= 0) {
      out = tb_sock_wrap(fd, ss.ss_family == AF_INET6 ? AF_INET6 : AF_INET, err);
      if (out)
        name_accepted(s, out, &ss);
      break;
    }
    if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO)
      continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      tb_sock_sys_fail(err, TB_ERR_SOCKET, "accept", errno);
      break;
    }
    idle = 1;
    poll_first = 1;
  }
  atomic_store_explicit(&s->accept_idle, idle, memory_order_relaxed);
  tb_sock_leave(s);
  return out;
}

int tb_sock_connect(tb_sock *s, const tb_addr *a, int64_t timeout_ms, tb_error *err) {
  struct sockaddr_storage ss;
  socklen_t len = to_sockaddr(s, a, &ss);
  uint64_t deadline = tb_deadline(timeout_ms);
  int rc = -1, w, soerr = 0;
  socklen_t el = sizeof soerr;
  if (tb_sock_enter(s, err) < 0)
    return -1;
  if (s->connecting) {
    /* a no-wait connect called again: the caller saw the descriptor
     * writable, or gave up waiting (then this poll says so again) */
    struct pollfd p = {s->fd, POLLOUT, 0};
    s->connecting = 0;
    if (poll(&p, 1, 0) == 0) {
      s->connecting = 1;
      tb_sock_blocked(err, TB_WAIT_WRITE);
      goto out;
    }
    goto finished;
  }
  if (connect(s->fd, (struct sockaddr *)&ss, len) == 0) {
    rc = 0;
    goto connected;
  }
  if (errno != EINPROGRESS && errno != EINTR) {
    soerr = errno;
    goto failed;
  }
  w = tb_sock_wait(s, TB_WAIT_WRITE, deadline, err);
  if (w < 0) {
    s->connecting = err->kind == TB_ERR_BLOCKED;
    goto out;
  }
  if (w == 0) {
    tb_err_set(err, TB_ERR_TIMEOUT, "Connect timed out");
    goto out;
  }
finished:
  if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &soerr, &el) < 0)
    soerr = errno;
  if (soerr == 0) {
    rc = 0;
    goto connected;
  }
failed:
  tb_sock_sys_fail(err, soerr == ECONNREFUSED || soerr == ETIMEDOUT || soerr == ENETUNREACH || soerr == EHOSTUNREACH
                    ? TB_ERR_CONNECT
                    : TB_ERR_SOCKET,
           soerr == ECONNREFUSED ? "Connection refused" : "connect", soerr);
  if (soerr == ECONNREFUSED)
    tb_err_set(err, TB_ERR_CONNECT, "Connection refused");
  goto out;
connected:
  /* non-blocking only for the connect's timeout: the wait for input is a
   * blocking recv() (socket_bio.c); O_NONBLOCK is the only status flag set */
  if (fcntl(s->fd, F_SETFL, 0) < 0)
    rc = tb_sock_sys_fail(err, TB_ERR_SOCKET, "fcntl", errno);
out:
  tb_sock_leave(s);
  return rc;
}

static int opt_level(int opt, int *level, int *name) {
  switch (opt) {
  case TB_SO_REUSEADDR: *level = SOL_SOCKET; *name = SO_REUSEADDR; return 0;
  case TB_SO_NODELAY: *level = IPPROTO_TCP; *name = TCP_NODELAY; return 0;
  case TB_SO_KEEPALIVE: *level = SOL_SOCKET; *name = SO_KEEPALIVE; return 0;
  case TB_SO_RCVBUF: *level = SOL_SOCKET; *name = SO_RCVBUF; return 0;
  case TB_SO_SNDBUF: *level = SOL_SOCKET; *name = SO_SNDBUF; return 0;
  default: return -1;
  }
}

/* Linger: value < 0 turns it off, else seconds. Traffic class goes to
 * IP_TOS or IPV6_TCLASS by family. */
int tb_sock_setopt(tb_sock *s, int opt, int value, tb_error *err) {
  int level, name, rc = 0;
  if (tb_sock_enter(s, err) < 0)
    return -1;
  if (opt == TB_SO_LINGER) {
    struct linger l;
    l.l_onoff = value >= 0;
    l.l_linger = value >= 0 ? value : 0;
    rc = setsockopt(s->fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  } else if (opt == TB_SO_TCLASS) {
    rc = s->family == AF_INET6 ? setsockopt(s->fd, IPPROTO_IPV6, IPV6_TCLASS, &value, sizeof value)
                               : setsockopt(s->fd, IPPROTO_IP, IP_TOS, &value, sizeof value);
  } else if (opt_level(opt, &level, &name) == 0) {
    rc = setsockopt(s->fd, level, name, &value, sizeof value);
  } else {
    tb_err_set(err, TB_ERR_ARGUMENT, "unknown socket option %d", opt);
    tb_sock_leave(s);
    return -1;
  }
  if (rc < 0)
    tb_sock_sys_fail(err, TB_ERR_SOCKET, "setsockopt", errno);
  tb_sock_leave(s);
  return rc < 0 ? -1 : 0;
}

int tb_sock_getopt(tb_sock *s, int opt, int *value, tb_error *err) {
  int level, name, rc;
  socklen_t len = sizeof *value;
  if (tb_sock_enter(s, err) < 0)
    return -1;
  if (opt == TB_SO_LINGER) {
    struct linger l;
    socklen_t ll = sizeof l;
    rc = getsockopt(s->fd, SOL_SOCKET, SO_LINGER, &l, &ll);
    *value = l.l_onoff ? l.l_linger : -1;
  } else if (opt == TB_SO_TCLASS) {
    rc = s->family == AF_INET6 ? getsockopt(s->fd, IPPROTO_IPV6, IPV6_TCLASS, value, &len)
                               : getsockopt(s->fd, IPPROTO_IP, IP_TOS, value, &len);
  } else if (opt_level(opt, &level, &name) == 0) {
    rc = getsockopt(s->fd, level, name, value, &len);
    if (rc == 0 && opt != TB_SO_RCVBUF && opt != TB_SO_SNDBUF)
      *value = *value != 0;
  } else {
    tb_err_set(err, TB_ERR_ARGUMENT, "unknown socket option %d", opt);
    tb_sock_leave(s);
    return -1;
  }
  if (rc < 0)
    tb_sock_sys_fail(err, TB_ERR_SOCKET, "getsockopt", errno);
  tb_sock_leave(s);
  return rc < 0 ? -1 : 0;
}

int tb_sock_name(tb_sock *s, int peer, tb_addr *a, tb_error *err) {
  struct sockaddr_storage ss;
  socklen_t len = sizeof ss;
  int rc;
  if (tb_sock_enter(s, err) < 0)
    return -1;
  if (s->named & (1 << !!peer)) {
    *a = s->names[!!peer];
    tb_sock_leave(s);
    return 0;
  }
  memset(&ss, 0, sizeof ss);
  rc = peer ? getpeername(s->fd, (struct sockaddr *)&ss, &len) : getsockname(s->fd, (struct sockaddr *)&ss, &len);
  if (rc < 0)
    tb_sock_sys_fail(err, TB_ERR_SOCKET, peer ? "getpeername" : "getsockname", errno);
  else
    from_sockaddr(&ss, a);
  tb_sock_leave(s);
  return rc < 0 ? -1 : 0;
}

/* TCP half-close; output first says close_notify (socket_tls.c). */
int tb_sock_shutdown(tb_sock *s, int out, tb_error *err) {
  int rc;
  if (tb_sock_enter(s, err) < 0)
    return -1;
  if (out)
    atomic_store(&s->shut_out, 1);
  else
    atomic_store(&s->shut_in, 1);
  rc = shutdown(s->fd, out ? SHUT_WR : SHUT_RD);
  if (rc < 0 && errno != ENOTCONN)
    tb_sock_sys_fail(err, TB_ERR_SOCKET, "shutdown", errno);
  else
    rc = 0;
  tb_sock_leave(s);
  return rc;
}
