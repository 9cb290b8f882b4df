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
#include <netinet/tcp.h>

static SSL_CTX *ctx;
static tb_keymat *key;
static int port;

static uint64_t ms_since(uint64_t t0) { return (tb_now_ns() - t0) / 1000000u; }

static tb_sock *connect_client(int cork) {
  tb_error err;
  tb_addr a;
  tb_sock *c = tb_sock_new(AF_INET, &err);
  tb_test_loopback(&a, port);
  CHECK(c != NULL);
  CHECK(tb_sock_connect(c, &a, 2000, &err) == 0);
  CHECK(!cork || setsockopt(c->fd, IPPROTO_TCP, TCP_CORK, &cork, sizeof cork) == 0);
  CHECK(tb_sock_attach(c, ctx, 1, &err) == 0);
  CHECK(tb_test_sock_handshake(c, NULL) == 0);
  return c;
}

/* arg non-NULL: the client corks its socket, so its Finished and "hello"
 * reach the server in one segment. */
static void *client_main(void *arg) {
  tb_error err;
  char buf[16] = {0};
  tb_sock *c = connect_client(arg != NULL);
  CHECK(tb_test_wr(c, "hello", 5, &err) == 5);
  if (arg) {
    int off = 0;
    CHECK(setsockopt(c->fd, IPPROTO_TCP, TCP_CORK, &off, sizeof off) == 0);
  }
  CHECK(tb_test_rd(c, buf, 5, 5000, &err) == 5);
  CHECK(memcmp(buf, "world", 5) == 0);
  /* the server's TLS 1.3 tickets came before its reply */
  CHECK(SSL_SESSION_has_ticket(SSL_get0_session(c->e->ssl)));
  /* the server closes with close_notify: end of stream */
  CHECK(tb_test_rd(c, buf, sizeof buf, 5000, &err) == TB_SOCK_EOF);
  tb_sock_free(c);
  return NULL;
}

/* Waits for the server's tickets before it writes anything: the server,
 * blocked reading, must have sent the tickets it held before it waited. */
static void *ticket_waiting_client(void *arg) {
  tb_error err;
  char buf[8];
  tb_sock *c = connect_client(0);
  (void)arg;
  CHECK(tb_test_rd(c, buf, 1, 300, &err) == TB_SOCK_ERR && err.kind == TB_ERR_TIMEOUT);
  CHECK(SSL_SESSION_has_ticket(SSL_get0_session(c->e->ssl)));
  CHECK(tb_test_wr(c, "hello", 5, &err) == 5);
  CHECK(tb_test_rd(c, buf, 3, 5000, &err) == 3 && memcmp(buf, "bye", 3) == 0);
  tb_sock_free(c);
  return NULL;
}

/* Two records written while the socket is corked, so they reach the
 * server in one segment and its read-ahead takes both with one read():
 * afterwards the second record sits in a buffer (the socket's or OpenSSL's)
 * while the descriptor is not readable. Then the client waits for the server's
 * "done". */
static void *two_records_client(void *arg) {
  tb_error err;
  char buf[8];
  int on = 1, off = 0;
  tb_sock *c = connect_client(0);
  (void)arg;
  CHECK(setsockopt(c->fd, IPPROTO_TCP, TCP_CORK, &on, sizeof on) == 0);
  CHECK(tb_test_wr(c, "first", 5, &err) == 5 && tb_test_wr(c, "second", 6, &err) == 6);
  CHECK(setsockopt(c->fd, IPPROTO_TCP, TCP_CORK, &off, sizeof off) == 0);
  CHECK(tb_test_rd(c, buf, 4, 5000, &err) == 4 && memcmp(buf, "done", 4) == 0);
  tb_sock_free(c);
  return NULL;
}

/* Writes "late" well after the server's first read timed out. */
static void *late_client(void *arg) {
  tb_error err;
  char buf[4];
  tb_sock *c = connect_client(0);
  (void)arg;
  usleep(400000);
  CHECK(tb_test_wr(c, "late", 4, &err) == 4);
  CHECK(tb_test_rd(c, buf, 3, 5000, &err) == 3 && memcmp(buf, "bye", 3) == 0);
  tb_sock_free(c);
  return NULL;
}

static void names_match_kernel(tb_sock *s) {
  for (int peer = 0; peer < 2; peer++) {
    tb_error err;
    tb_addr cached, kernel;
    struct sockaddr_in in;
    socklen_t len = sizeof in;
    CHECK(tb_sock_name(s, peer, &cached, &err) == 0);
    CHECK((peer ? getpeername : getsockname)(s->fd, (struct sockaddr *)&in, &len) == 0);
    memset(&kernel, 0, sizeof kernel);
    memcpy(kernel.bytes, &in.sin_addr, 4);
    kernel.len = 4;
    kernel.port = ntohs(in.sin_port);
    CHECK(memcmp(&cached, &kernel, sizeof kernel) == 0);
  }
}

typedef struct blocked {
  tb_sock *s;
  long rc;
  tb_error err;
} blocked;

static void *blocked_read(void *arg) {
  blocked *b = arg;
  char buf[8];
  b->rc = tb_test_rd(b->s, buf, sizeof buf, 0, &b->err);
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
  l = tb_test_listener(&a);
  port = a.port;

  t0 = tb_now_ns();
  CHECK(tb_sock_accept(l, 150, &err) == NULL && err.kind == TB_ERR_TIMEOUT);
  CHECK(ms_since(t0) >= 149 && ms_since(t0) < 300);

  pthread_create(&client, NULL, client_main, "cork");
  s = tb_sock_accept(l, 5000, &err);
  CHECK(s != NULL);
  /* both names come from accept4 and the listener, and match the kernel's */
  CHECK(s->named == 3);
  names_match_kernel(s);
  CHECK(tb_sock_attach(s, ctx, 0, &err) == 0);
  CHECK(tb_test_sock_handshake(s, key) == 0);
  /* the TLS 1.3 tickets are held; the client's "hello" came with its
   * Finished, so the read returns it without sending them ... */
  CHECK(s->out_len > 0 && s->out_off == 0);
  CHECK(tb_test_rd(s, buf, 5, 5000, &err) == 5);
  CHECK(memcmp(buf, "hello", 5) == 0);
  CHECK(s->out_len > 0);
  /* ... and before the server waits for the peer they go */
  t0 = tb_now_ns();
  CHECK(tb_test_rd(s, buf, 5, 100, &err) == TB_SOCK_ERR && err.kind == TB_ERR_TIMEOUT);
  CHECK(ms_since(t0) >= 99 && ms_since(t0) < 200);
  CHECK(s->out_len == 0);
  CHECK(tb_test_wr(s, "world", 5, &err) == 5);
  CHECK(s->e->stats.app_in == 5 && s->e->stats.app_out == 5 && s->e->stats.bytes_out > 0);
  tb_sock_close_notify(s);
  pthread_join(client, NULL);
  tb_sock_free(s);

  /* read ahead: whatever is already held is returned without waiting for
   * the descriptor, available() counts decrypted bytes, and a
   * read with nothing held still times out */
  pthread_create(&client, NULL, two_records_client, NULL);
  s = tb_sock_accept(l, 5000, &err);
  CHECK(s && tb_sock_attach(s, ctx, 0, &err) == 0 && tb_test_sock_handshake(s, key) == 0);
  CHECK(tb_test_rd(s, buf, 3, 5000, &err) == 3 && memcmp(buf, "fir", 3) == 0);
  CHECK(tb_sock_pending(s) == 2);
  CHECK(tb_test_rd(s, buf, 3, 5000, &err) == 2 && memcmp(buf, "st", 2) == 0);
  /* "second" waits in the socket's buffer, or in OpenSSL's where it reads ahead */
  CHECK(tb_sock_pending(s) == 0 && (s->bio_reads_ahead ? s->in_len > s->in_off : SSL_has_pending(s->e->ssl)));
  t0 = tb_now_ns();
  CHECK(tb_test_rd(s, buf, sizeof buf, 3000, &err) == 6 && memcmp(buf, "second", 6) == 0);
  CHECK(ms_since(t0) < 1000);
  t0 = tb_now_ns();
  CHECK(tb_test_rd(s, buf, sizeof buf, 100, &err) == TB_SOCK_ERR && err.kind == TB_ERR_TIMEOUT);
  CHECK(ms_since(t0) >= 99 && ms_since(t0) < 1000);
  CHECK(tb_test_wr(s, "done", 4, &err) == 4);
  pthread_join(client, NULL);
  tb_sock_free(s);

  /* a client that waits for the tickets before it writes gets them while
   * the server waits for its request */
  pthread_create(&client, NULL, ticket_waiting_client, NULL);
  s = tb_sock_accept(l, 5000, &err);
  CHECK(s && tb_sock_attach(s, ctx, 0, &err) == 0 && tb_test_sock_handshake(s, key) == 0);
  CHECK(tb_test_rd(s, buf, 5, 5000, &err) == 5 && memcmp(buf, "hello", 5) == 0);
  CHECK(tb_test_wr(s, "bye", 3, &err) == 3);
  pthread_join(client, NULL);
  tb_sock_free(s);

  /* the wait for input is a recv() under SO_RCVTIMEO: a read without a
   * timeout after one that timed out waits as long as it takes */
  pthread_create(&client, NULL, late_client, NULL);
  s = tb_sock_accept(l, 5000, &err);
  CHECK(s && tb_sock_attach(s, ctx, 0, &err) == 0 && tb_test_sock_handshake(s, key) == 0);
  CHECK(tb_test_rd(s, buf, 4, 100, &err) == TB_SOCK_ERR && err.kind == TB_ERR_TIMEOUT);
  CHECK(tb_test_rd(s, buf, 4, 0, &err) == 4 && memcmp(buf, "late", 4) == 0);
  CHECK(tb_test_wr(s, "bye", 3, &err) == 3);
  pthread_join(client, NULL);
  tb_sock_free(s);

  /* close from another thread wakes a reader blocked with no timeout, and
   * the descriptor goes only when that reader has left */
  pthread_create(&client, NULL, client_main, NULL);
  s2 = tb_sock_accept(l, 5000, &err);
  CHECK(s2 && tb_sock_attach(s2, ctx, 0, &err) == 0 && tb_test_sock_handshake(s2, key) == 0);
  CHECK(tb_test_rd(s2, buf, 5, 5000, &err) == 5);
  memset(&b, 0, sizeof b);
  b.s = s2;
  pthread_create(&reader, NULL, blocked_read, &b);
  usleep(100000);
  CHECK(atomic_load(&s2->refs) == 2); /* the owner and the blocked reader */
  tb_test_wr(s2, "world", 5, &err);
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

  /* a timeout the kernel refuses fails the read rather than leaving the
   * old one in force: a pipe is not a socket, so SO_RCVTIMEO fails */
  {
    int fds[2];
    CHECK(pipe(fds) == 0);
    s = tb_sock_wrap(fds[0], AF_INET, &err);
    CHECK(s != NULL);
    memset(&err, 0, sizeof err);
    CHECK(tb_sock_fill(s, 100, &err) == -1 && err.kind == TB_ERR_SOCKET);
    CHECK(strstr(err.msg, "SO_RCVTIMEO") != NULL);
    CHECK(s->filling == 0); /* a later read is not locked out */
    tb_sock_free(s);
    close(fds[1]);
  }

  tb_sock_free(l);
  tb_keymat_free(key);
  tb_ctx_free(ctx);
  return tb_test_finish("socket");
}
