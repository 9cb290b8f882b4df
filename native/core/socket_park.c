/* Waits a caller does itself: a virtual thread must not wait in native code
 * (the JDK cannot unmount it there and its carrier is pinned), so its calls
 * run with `nowait` set: where the call would have waited for the peer it
 * fails with TB_ERR_BLOCKED instead, saying what it waits for, and the
 * caller parks until the descriptor is ready. Readiness comes from one
 * epoll set the caller's own thread waits on (tb_poller_wait), each socket
 * armed one-shot with the caller's token (tb_sock_arm). A descriptor that
 * closes leaves the set by itself, so nothing here outlives the socket. */
#include "socket.h"

#include <errno.h>
#include <unistd.h>
#include <sys/epoll.h>

static _Thread_local int nowait;

int tb_sock_set_nowait(int on) {
  int prev = nowait;
  nowait = on;
  return prev;
}

int tb_sock_nowait(void) { return nowait; }

int tb_sock_blocked(tb_error *err, int what) {
  tb_err_set(err, TB_ERR_BLOCKED, "would wait to %s", what == TB_WAIT_WRITE ? "write" : "read");
  err->code = (unsigned long)what;
  return -1;
}

int tb_poller_new(tb_error *err) {
  int fd = epoll_create1(EPOLL_CLOEXEC);
  if (fd < 0)
    return tb_sock_sys_fail(err, TB_ERR_SOCKET, "epoll_create1", errno);
  return fd;
}

int tb_sock_arm(tb_sock *s, int epfd, int what, uint64_t token, tb_error *err) {
  struct epoll_event ev;
  int rc;
  if (tb_sock_enter(s, err) < 0)
    return -1;
  ev.events = EPOLLONESHOT | (what & TB_WAIT_READ ? EPOLLIN | EPOLLRDHUP : 0) | (what & TB_WAIT_WRITE ? EPOLLOUT : 0);
  ev.data.u64 = token;
  rc = epoll_ctl(epfd, EPOLL_CTL_MOD, s->fd, &ev);
  if (rc < 0 && errno == ENOENT)
    rc = epoll_ctl(epfd, EPOLL_CTL_ADD, s->fd, &ev);
  if (rc < 0)
    tb_sock_sys_fail(err, TB_ERR_SOCKET, "epoll_ctl", errno);
  tb_sock_leave(s);
  return rc < 0 ? -1 : 0;
}

int tb_poller_wait(int epfd, uint64_t *tokens, int max, tb_error *err) {
  struct epoll_event ev[64];
  int n, i;
  if (max > 64)
    max = 64;
  do
    n = epoll_wait(epfd, ev, max, -1);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return tb_sock_sys_fail(err, TB_ERR_SOCKET, "epoll_wait", errno);
  for (i = 0; i < n; i++)
    tokens[i] = ev[i].data.u64;
  return n;
}
