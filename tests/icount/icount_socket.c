/* The instruction-count harness's socket rows ("socket 1024", "socket t12
 * 1024"; tests/icount/icount.c runs them): what a tlsbridge socket server
 * (native/core/socket*.c, OpenSSL on the descriptor) pays per keep-alive
 * request. A tb_sock client and server on an established loopback TCP
 * connection exchange a ~100-byte HTTP-like request and a 1 KiB response;
 * only the server's tb_sock_read of the request and tb_sock_write of the
 * response are counted, the client's write and read running with collection
 * paused. After the handshake (two threads, outside the counts) everything
 * runs on this thread in order: each message sits in the loopback socket's
 * buffer before its reader comes, so every counted read finds its bytes and
 * the count does not depend on scheduling. The floor is plain OpenSSL on
 * the descriptor (SSL_set_fd, blocking, OpenSSL reading ahead: one recv
 * per request, as tlsbridge's socket makes) doing the same exchange,
 * counted the same way. */
#include "icount.h"
#include "ciphers.h"
#include "socket.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#define RESPONSE 1024
#define TIMEOUT_MS 5000 /* a read that should find its bytes at once; a hang fails */

static const char REQUEST[] = "GET /icount HTTP/1.1\r\nHost: icount.test\r\nUser-Agent: icount\r\n"
                              "Accept: */*\r\nConnection: keep-alive\r\n\r\n";
#define REQ_LEN (sizeof REQUEST - 1)

static uint8_t reqbuf[8192]; /* the server's read buffer, a servlet container's size */

static const struct {
  const char *tag; /* the row is "socket <tag>1024" */
  int version;
} VERSIONS[2] = {{"", TLS1_3_VERSION}, {"t12 ", TLS1_2_VERSION}};

/* ---- tlsbridge: tb_sock on both ends ---- */

static uint8_t *pin_buf(void *arg) { return arg; }
static void unpin_buf(void *arg, uint8_t *p, int commit) { (void)arg, (void)p, (void)commit; }

typedef struct hs {
  tb_sock *s;
  tb_keymat *key; /* the server's; NULL for the client */
} hs;

/* One end's handshake, answering its tasks as the Java glue would. */
static void *tb_sock_hs(void *arg) {
  hs *h = arg;
  tb_error err;
  int rc;
  while ((rc = tb_sock_handshake(h->s, TIMEOUT_MS, NULL, &err)) > 0) {
    if (h->s->e->task == TB_TASK_VERIFY)
      tb_engine_set_verify_result(h->s->e, 1, 0);
    else if (h->s->e->task == TB_TASK_CERT && h->key)
      NEED(tb_keymat_use(h->s->e, h->key, &err) == 0);
    tb_engine_task_done(h->s->e);
  }
  NEED(rc == 0);
  return NULL;
}

/* A connected, handshaken pair: c connects to listener l (on port), s is
 * what l accepted; TCP_NODELAY on both, as servers set it. */
static void tb_sock_pair(SSL_CTX *ctx, tb_sock *l, int port, tb_keymat *key, int version, tb_sock **c,
                         tb_sock **s) {
  tb_error err;
  tb_addr a;
  pthread_t t;
  hs hc, hsrv;
  int i;
  memset(&a, 0, sizeof a);
  a.len = 4;
  a.port = port;
  NEED(inet_pton(AF_INET, "127.0.0.1", a.bytes) == 1);
  *c = tb_sock_new(AF_INET, &err);
  NEED(*c && tb_sock_connect(*c, &a, TIMEOUT_MS, &err) == 0);
  *s = tb_sock_accept(l, TIMEOUT_MS, &err);
  NEED(*s != NULL);
  for (i = 0; i < 2; i++) {
    tb_sock *x = i ? *s : *c;
    NEED(tb_sock_setopt(x, TB_SO_NODELAY, 1, &err) == 0);
    NEED(tb_sock_attach(x, ctx, !i, &err) == 0);
    NEED(tb_configure(x->e->ssl, version == TLS1_2_VERSION ? SUITE12 : NULL, SUITE, version, version, &err) == 0);
  }
  hc = (hs){*c, NULL};
  hsrv = (hs){*s, key};
  NEED(pthread_create(&t, NULL, tb_sock_hs, &hc) == 0);
  tb_sock_hs(&hsrv);
  NEED(pthread_join(t, NULL) == 0);
}

/* A request's ends: tb_sock or SSL. */
typedef struct ends {
  void *c, *s;
} ends;

/* "<who> socket <tag>1024 x<exchanges>": `exchanges` requests, each one
 * request and its response, only the server's part counted (exchange
 * resumes collection around it). */
static void count_requests(const char *who, int v, void (*exchange)(void *, int), void *c, void *s, int exchanges) {
  char name[64];
  ends e = {c, s};
  snprintf(name, sizeof name, "%s socket %s%d x%d", who, VERSIONS[v].tag, RESPONSE, exchanges);
  count_region(name, exchange, &e, exchanges, 1);
  NEED(memcmp(reqbuf, REQUEST, REQ_LEN) == 0 && memcmp(plain, src, RESPONSE) == 0);
}

static void tb_sock_exchange(void *arg, int counted) {
  ends *e = arg;
  tb_sock *c = e->c, *s = e->s;
  tb_error err;
  long r, w;
  NEED(tb_sock_write(c, pin_buf, unpin_buf, (void *)REQUEST, REQ_LEN, &err) == (long)REQ_LEN);
  if (counted)
    region_resume();
  r = tb_sock_read(s, pin_buf, unpin_buf, reqbuf, sizeof reqbuf, TIMEOUT_MS, &err);
  w = tb_sock_write(s, pin_buf, unpin_buf, src, RESPONSE, &err);
  if (counted)
    region_pause();
  NEED(r == (long)REQ_LEN && w == RESPONSE);
  NEED(tb_sock_read(c, pin_buf, unpin_buf, plain, sizeof plain, TIMEOUT_MS, &err) == RESPONSE);
}

static void tb_sock_regions(tb_keymat *key, int exchanges) {
  tb_error err;
  tb_addr a;
  SSL_CTX *ctx = tb_ctx_new(&err);
  tb_sock *l = tb_sock_new(AF_INET, &err), *c, *s;
  int v;
  NEED(ctx && l);
  memset(&a, 0, sizeof a);
  a.len = 4;
  NEED(inet_pton(AF_INET, "127.0.0.1", a.bytes) == 1);
  NEED(tb_sock_bind(l, &a, 1, &err) == 0 && tb_sock_listen(l, 8, &err) == 0 && tb_sock_name(l, 0, &a, &err) == 0);
  for (v = 0; v < 2; v++) {
    tb_sock_pair(ctx, l, a.port, key, VERSIONS[v].version, &c, &s);
    count_requests("tlsbridge", v, tb_sock_exchange, c, s, exchanges);
    tb_sock_close_notify(s);
    tb_sock_free(c);
    tb_sock_free(s);
  }
  tb_sock_free(l);
  tb_ctx_free(ctx);
}

/* ---- the floor: plain OpenSSL, SSL_set_fd ---- */

/* A connected loopback TCP pair, blocking, TCP_NODELAY: fd[0] the client's. */
static void tcp_pair(int fd[2]) {
  struct sockaddr_in a;
  socklen_t len = sizeof a;
  int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1, i;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  NEED(l >= 0 && bind(l, (struct sockaddr *)&a, sizeof a) == 0 && listen(l, 1) == 0);
  NEED(getsockname(l, (struct sockaddr *)&a, &len) == 0);
  fd[0] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  /* the kernel completes a loopback connect before anyone accepts */
  NEED(fd[0] >= 0 && connect(fd[0], (struct sockaddr *)&a, sizeof a) == 0);
  fd[1] = accept4(l, NULL, NULL, SOCK_CLOEXEC);
  NEED(fd[1] >= 0);
  for (i = 0; i < 2; i++)
    NEED(setsockopt(fd[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) == 0);
  close(l);
}

static void *ossl_connect(void *ssl) {
  NEED(SSL_connect(ssl) == 1);
  return NULL;
}

static void ossl_sock_exchange(void *arg, int counted) {
  ends *e = arg;
  SSL *c = e->c, *s = e->s;
  int r, w;
  NEED(SSL_write(c, REQUEST, (int)REQ_LEN) == (int)REQ_LEN);
  if (counted)
    region_resume();
  r = SSL_read(s, reqbuf, sizeof reqbuf);
  w = SSL_write(s, src, RESPONSE);
  if (counted)
    region_pause();
  NEED(r == (int)REQ_LEN && w == RESPONSE);
  NEED(SSL_read(c, plain, sizeof plain) == RESPONSE);
}

static void ossl_sock_regions(EVP_PKEY *pk, X509 *x, int exchanges) {
  int v, fd[2];
  for (v = 0; v < 2; v++) {
    SSL_CTX *cctx = ossl_ctx_v(NULL, NULL, VERSIONS[v].version), *sctx = ossl_ctx_v(pk, x, VERSIONS[v].version);
    SSL *c = SSL_new(cctx), *s = SSL_new(sctx);
    pthread_t t;
    tcp_pair(fd);
    NEED(c && s && SSL_set_fd(c, fd[0]) && SSL_set_fd(s, fd[1]));
    /* one recv() per request, as tlsbridge's socket makes (its BIO reads
     * ahead where it seals, OpenSSL elsewhere), not a header's and a body's
     * (OpenSSL's default: 280 to 430 instructions more a request) */
    SSL_set_read_ahead(s, 1);
    NEED(pthread_create(&t, NULL, ossl_connect, c) == 0);
    NEED(SSL_accept(s) == 1);
    NEED(pthread_join(t, NULL) == 0);
    count_requests("openssl", v, ossl_sock_exchange, c, s, exchanges);
    SSL_free(c);
    SSL_free(s);
    close(fd[0]);
    close(fd[1]);
    SSL_CTX_free(cctx);
    SSL_CTX_free(sctx);
  }
}

void socket_regions(tb_keymat *key, EVP_PKEY *pk, X509 *x, int exchanges) {
  signal(SIGPIPE, SIG_IGN); /* as the JVM does; a peer's close must not kill the harness */
  tb_sock_regions(key, exchanges);
  ossl_sock_regions(pk, x, exchanges);
}
