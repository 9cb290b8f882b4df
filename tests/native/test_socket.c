/* The socket core without the JVM: loopback TLS over tb_sock, timeouts,
 * and close() from another thread waking a blocked reader without freeing
 * anything under it. */
#include "test_support.h"
#include "socket.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>


static SSL_CTX *ctx;
static tb_keymat *key;
static int port;

static uint8_t *pin_buf(void *arg) { return arg; }
static void unpin_buf(void *arg, uint8_t *p, int commit) { (void)arg, (void)p, (void)commit; }

static long rd(tb_sock *s, void *buf, size_t n, int64_t timeout_ms, tb_error *err) {
  return tb_sock_read(s, pin_buf, unpin_buf, buf, n, timeout_ms, err);
}

static long wr(tb_sock *s, const void *buf, size_t n, tb_error *err) {
  return tb_sock_write(s, pin_buf, unpin_buf, (void *)buf, n, err);
}

static int handshake(tb_sock *s, tb_keymat *k) {
  tb_error err;
  int rc;
  while ((rc = tb_sock_handshake(s, 5000, NULL, &err)) > 0)
    tb_test_run_task(s->e, k);
  if (rc < 0)
    fprintf(stderr, "handshake: %s\n", err.msg);
  return rc;
}

static uint64_t ms_since(uint64_t t0) { return (tb_now_ns() - t0) / 1000000u; }

static void *client_main(void *arg) {
  tb_error err;
  tb_addr a;
  char buf[16] = {0};
  tb_sock *c = tb_sock_new(AF_INET, &err);
  (void)arg;
  memset(&a, 0, sizeof a);
  a.len = 4;
  a.port = port;
  inet_pton(AF_INET, "127.0.0.1", a.bytes);
  CHECK(c != NULL);
  CHECK(tb_sock_connect(c, &a, 2000, &err) == 0);
  CHECK(tb_sock_attach(c, ctx, 1, &err) == 0);
  CHECK(handshake(c, NULL) == 0);
  CHECK(wr(c, "hello", 5, &err) == 5);
  CHECK(rd(c, buf, 5, 5000, &err) == 5);
  CHECK(memcmp(buf, "world", 5) == 0);
  /* the server closes with close_notify: end of stream */
  CHECK(rd(c, buf, sizeof buf, 5000, &err) == TB_SOCK_EOF);
  tb_sock_free(c);
  return NULL;
}

typedef struct blocked {
  tb_sock *s;
  long rc;
  tb_error err;
} blocked;

static void *blocked_read(void *arg) {
  blocked *b = arg;
  char buf[8];
  b->rc = rd(b->s, buf, sizeof buf, 0, &b->err);
  return NULL;
}

int main(void) {
  tb_error err;
  tb_addr a;
  pthread_t client, reader;
  tb_sock *l, *s, *s2;
  uint64_t t0;
  char buf[16] = {0};
  blocked b;

  signal(SIGPIPE, SIG_IGN); /* the JVM ignores it; so must a C user of a socket */
  ctx = tb_ctx_new(&err);
  key = tb_test_keymat("ec");
  CHECK(ctx && key);
  l = tb_sock_new(AF_INET, &err);
  memset(&a, 0, sizeof a);
  a.len = 4;
  inet_pton(AF_INET, "127.0.0.1", a.bytes);
  CHECK(tb_sock_bind(l, &a, 1, &err) == 0);
  CHECK(tb_sock_listen(l, 8, &err) == 0);
  CHECK(tb_sock_name(l, 0, &a, &err) == 0);
  port = a.port;
  CHECK(port > 0);

  t0 = tb_now_ns();
  CHECK(tb_sock_accept(l, 150, &err) == NULL && err.kind == TB_ERR_TIMEOUT);
  CHECK(ms_since(t0) >= 149 && ms_since(t0) < 300);

  pthread_create(&client, NULL, client_main, NULL);
  s = tb_sock_accept(l, 5000, &err);
  CHECK(s != NULL);
  CHECK(tb_sock_attach(s, ctx, 0, &err) == 0);
  CHECK(handshake(s, key) == 0);
  CHECK(rd(s, buf, 5, 5000, &err) == 5);
  CHECK(memcmp(buf, "hello", 5) == 0);
  t0 = tb_now_ns();
  CHECK(rd(s, buf, 5, 100, &err) == TB_SOCK_ERR && err.kind == TB_ERR_TIMEOUT);
  CHECK(ms_since(t0) >= 99 && ms_since(t0) < 200);
  CHECK(wr(s, "world", 5, &err) == 5);
  CHECK(s->e->stats.app_in == 5 && s->e->stats.app_out == 5 && s->e->stats.bytes_out > 0);
  tb_sock_close_notify(s);
  pthread_join(client, NULL);
  tb_sock_free(s);

  /* close from another thread wakes a reader blocked with no timeout, and
   * the descriptor goes only when that reader has left */
  pthread_create(&client, NULL, client_main, NULL);
  s2 = tb_sock_accept(l, 5000, &err);
  CHECK(s2 && tb_sock_attach(s2, ctx, 0, &err) == 0 && handshake(s2, key) == 0);
  CHECK(rd(s2, buf, 5, 5000, &err) == 5);
  memset(&b, 0, sizeof b);
  b.s = s2;
  pthread_create(&reader, NULL, blocked_read, &b);
  usleep(100000);
  CHECK(atomic_load(&s2->refs) == 2); /* the owner and the blocked reader */
  wr(s2, "world", 5, &err);
  tb_sock_close_notify(s2);
  t0 = tb_now_ns();
  tb_sock_close(s2);
  pthread_join(reader, NULL);
  CHECK(ms_since(t0) < 1000);
  CHECK(b.rc == TB_SOCK_ERR && b.err.kind == TB_ERR_SOCKET);
  CHECK(atomic_load(&s2->released) == 1 && s2->fd == -1);
  CHECK(tb_sock_enter(s2, &err) < 0); /* closed, not freed */
  pthread_join(client, NULL);
  tb_sock_free(s2);

  tb_sock_free(l);
  tb_keymat_free(key);
  tb_ctx_free(ctx);
  if (tb_test_failures)
    fprintf(stderr, "%d socket check(s) failed\n", tb_test_failures);
  return tb_test_failures ? 1 : 0;
}
