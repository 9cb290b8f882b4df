/* No-wait socket calls (what a virtual thread's calls are): connect, accept,
 * handshake, read and write on one thread, for both ends, never blocking;
 * each call that would wait fails with TB_ERR_BLOCKED saying for what, the
 * descriptor is armed in the epoll set and the call made again once it is
 * ready, as NativeSocket does. Nothing may block: SIGALRM ends a hang. */
#include "test_support.h"
#include "socket.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int ep;

/* Arms each socket that is blocked (what != 0) and waits until one is ready. */
static void wait_any(tb_sock *a, int wa, tb_sock *b, int wb) {
  tb_error err;
  uint64_t t[8];
  if (wa)
    CHECK(tb_sock_arm(a, ep, wa, (uint64_t)(uintptr_t)a, &err) == 0);
  if (wb)
    CHECK(tb_sock_arm(b, ep, wb, (uint64_t)(uintptr_t)b, &err) == 0);
  CHECK(tb_poller_wait(ep, t, 8, &err) > 0);
}

/* The TB_WAIT_* a call blocked on, or 0 when it did not block. */
static int blocked_on(int failed, const tb_error *err) {
  if (!failed || err->kind != TB_ERR_BLOCKED)
    return 0;
  CHECK(err->code == TB_WAIT_READ || err->code == TB_WAIT_WRITE);
  return (int)err->code;
}

static int step_handshake(tb_sock *s, tb_keymat *key, int *done) {
  tb_error err;
  int rc;
  if (*done)
    return 0;
  tb_err_clear(&err);
  while ((rc = tb_sock_handshake(s, 0, NULL, &err)) > 0)
    tb_test_run_task(s->e, key);
  if (rc == 0) {
    *done = 1;
    return 0;
  }
  CHECK(err.kind == TB_ERR_BLOCKED);
  return blocked_on(1, &err);
}

int main(void) {
  tb_error err;
  tb_addr a;
  tb_sock *l, *c, *s = NULL;
  SSL_CTX *ctx;
  tb_keymat *key;
  int wc, ws, cdone = 0, sdone = 0;
  size_t big = 8u << 20, sent = 0, got = 0;
  int write_blocks = 0;
  uint8_t *out, *in;
  char buf[16];
  long n;

  signal(SIGPIPE, SIG_IGN);
  alarm(60);
  ctx = tb_ctx_new(&err);
  key = tb_test_keymat("ec");
  CHECK(ctx && key);
  ep = tb_poller_new(&err);
  CHECK(ep >= 0);
  CHECK(tb_sock_set_nowait(1) == 0);
  CHECK(tb_sock_nowait() == 1);

  l = tb_test_listener(&a);

  /* nothing queued: accept says it waits for input */
  tb_err_clear(&err);
  CHECK(tb_sock_accept(l, 0, &err) == NULL && blocked_on(1, &err) == TB_WAIT_READ);

  c = tb_sock_new(AF_INET, &err);
  tb_err_clear(&err);
  while (tb_sock_connect(c, &a, 0, &err) != 0) {
    CHECK(blocked_on(1, &err) == TB_WAIT_WRITE);
    wait_any(c, TB_WAIT_WRITE, NULL, 0);
    tb_err_clear(&err);
  }
  tb_err_clear(&err);
  while ((s = tb_sock_accept(l, 0, &err)) == NULL) {
    CHECK(blocked_on(1, &err) == TB_WAIT_READ);
    wait_any(l, TB_WAIT_READ, NULL, 0);
    tb_err_clear(&err);
  }
  CHECK(tb_sock_attach(c, ctx, 1, &err) == 0);
  CHECK(tb_sock_attach(s, ctx, 0, &err) == 0);

  /* both handshakes on this one thread */
  while (!cdone || !sdone) {
    wc = step_handshake(c, NULL, &cdone);
    ws = step_handshake(s, key, &sdone);
    if (wc || ws)
      wait_any(c, wc, s, ws);
  }

  /* a read with nothing there blocks for input, then gets what came */
  tb_err_clear(&err);
  CHECK(tb_test_rd(c, buf, sizeof buf, 0, &err) == TB_SOCK_ERR && blocked_on(1, &err) == TB_WAIT_READ);
  CHECK(tb_test_wr(s, "ping", 4, &err) == 4);
  tb_err_clear(&err);
  while ((n = tb_test_rd(c, buf, sizeof buf, 0, &err)) == TB_SOCK_ERR) {
    CHECK(blocked_on(1, &err) == TB_WAIT_READ);
    wait_any(c, TB_WAIT_READ, NULL, 0);
    tb_err_clear(&err);
  }
  CHECK(n == 4 && memcmp(buf, "ping", 4) == 0);

  /* 8 MiB to a reader that reads only when the writer is blocked: the
   * write stops part way, says so, and goes on where it stopped */
  out = malloc(big);
  in = malloc(big);
  CHECK(out && in);
  for (size_t i = 0; i < big; i++)
    out[i] = (uint8_t)(i * 7);
  wc = 0;
  while (got < big) {
    if (sent < big || wc) {
      tb_err_clear(&err);
      n = tb_test_wr(c, out + sent, big - sent, &err);
      CHECK(n >= 0);
      sent += (size_t)n;
      wc = blocked_on(1, &err);
      if (wc) {
        CHECK(wc == TB_WAIT_WRITE);
        write_blocks++;
      }
    }
    tb_err_clear(&err);
    n = tb_test_rd(s, in + got, big - got, 0, &err);
    if (n > 0) {
      got += (size_t)n;
      continue;
    }
    ws = blocked_on(n == TB_SOCK_ERR, &err);
    CHECK(ws == TB_WAIT_READ);
    wait_any(c, wc, s, ws);
  }
  CHECK(sent == big && memcmp(in, out, big) == 0);
  CHECK(write_blocks > 0); /* the kernel's buffers filled at least once */
  printf("8 MiB written in %d no-wait calls that stopped for room\n", write_blocks);
  free(out);
  free(in);

  /* closed while armed: the next call says closed, not blocked */
  CHECK(tb_sock_arm(c, ep, TB_WAIT_READ, 1, &err) == 0);
  tb_sock_close(c);
  tb_err_clear(&err);
  CHECK(tb_test_rd(c, buf, sizeof buf, 0, &err) == TB_SOCK_ERR && err.kind == TB_ERR_SOCKET);
  CHECK(tb_sock_arm(c, ep, TB_WAIT_READ, 1, &err) == -1 && err.kind == TB_ERR_SOCKET);

  CHECK(tb_sock_set_nowait(0) == 1);
  tb_sock_free(c);
  tb_sock_free(s);
  tb_sock_free(l);
  close(ep);
  tb_keymat_free(key);
  tb_ctx_free(ctx);
  return tb_test_finish("socket_park");
}
