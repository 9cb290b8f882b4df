/* Sealing on native sockets (socket_bio.c with seal.c): the socket BIO takes
 * the sending keys where the OpenSSL in use hands them over, and its
 * records are read by OpenSSL's own record layer on the other end (the
 * client's reads), over TLS 1.3 and 1.2 with each AEAD suite; a write larger
 * than the kernel takes at once waits for its queued records; KeyUpdates in
 * both directions re-key it; a context without SSL_OP_ENABLE_KTLS keeps
 * OpenSSL sealing. Where the OpenSSL in use cannot hand keys over (3.0),
 * the same exchanges run unsealed and the test says so. */
#include "test_support.h"
#include "socket.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#define BULK (2u << 20)

static tb_keymat *key;
static tb_sock *listener;
static int port;

/* Reads exactly n bytes (0) or fails (-1). */
static int rd_all(tb_sock *s, uint8_t *buf, size_t n, tb_error *err) {
  size_t got = 0;
  while (got < n) {
    long r = tb_test_rd(s, buf + got, n - got, 5000, err);
    if (r <= 0) {
      fprintf(stderr, "read: %ld %s\n", r, r == TB_SOCK_ERR ? err->msg : "");
      return -1;
    }
    got += (size_t)r;
  }
  return 0;
}

static uint8_t pattern(size_t i) { return (uint8_t)(i * 7 + (i >> 13) + 3); }

typedef struct run {
  SSL_CTX *ctx;
  int key_updates; /* rounds of KeyUpdate, each side once per round */
  int sealed;      /* the client's socket took the keys */
} run;

/* Connects, then (after the server has filled its small send buffer) reads
 * the bulk transfer and checks every byte, then does the KeyUpdate rounds. */
static void *client_main(void *arg) {
  run *r = arg;
  tb_error err;
  tb_addr a;
  uint8_t *buf = malloc(BULK), one;
  size_t i, bad = 0;
  tb_sock *c = tb_sock_new(AF_INET, &err);
  CHECK(buf && c);
  tb_test_loopback(&a, port);
  CHECK(tb_sock_connect(c, &a, 2000, &err) == 0);
  CHECK(tb_sock_attach(c, r->ctx, 1, &err) == 0);
  CHECK(tb_test_sock_handshake(c, NULL) == 0);
  CHECK(tb_test_wr(c, "go", 2, &err) == 2);
  r->sealed = c->seal != NULL;
  usleep(100000);
  CHECK(rd_all(c, buf, BULK, &err) == 0);
  for (i = 0; i < BULK; i++)
    bad += buf[i] != pattern(i);
  CHECK(bad == 0);
  CHECK(tb_test_wr(c, "ok", 2, &err) == 2);
  for (int k = 0; k < r->key_updates; k++) {
    CHECK(rd_all(c, buf, 1000, &err) == 0 && buf[0] == (uint8_t)k && buf[999] == (uint8_t)k);
    CHECK(tb_sock_key_update(c, &err) == 0);
    one = (uint8_t)k;
    CHECK(tb_test_wr(c, &one, 1, &err) == 1);
  }
  CHECK(tb_test_rd(c, buf, 1, 5000, &err) == TB_SOCK_EOF); /* the server's close_notify */
  tb_sock_free(c);
  free(buf);
  return NULL;
}

/* One connection from ctx: a bulk write through a 4 KiB send buffer (each
 * record goes out in pieces, so the write waits on its queue), then the
 * KeyUpdate rounds (TLS 1.3), then close_notify. Returns whether the
 * server sealed. */
static int exchange(SSL_CTX *ctx, const char *what) {
  tb_error err;
  pthread_t client;
  run r = {ctx, SSL_CTX_get_max_proto_version(ctx) == TLS1_3_VERSION ? 3 : 0, -1};
  uint8_t *big = malloc(BULK), buf[1000];
  int small = 4096, sealed;
  size_t i;
  tb_sock *s;
  CHECK(big != NULL);
  for (i = 0; i < BULK; i++)
    big[i] = pattern(i);
  pthread_create(&client, NULL, client_main, &r);
  s = tb_sock_accept(listener, 5000, &err);
  CHECK(s != NULL);
  CHECK(setsockopt(s->fd, SOL_SOCKET, SO_SNDBUF, &small, sizeof small) == 0);
  CHECK(tb_sock_attach(s, ctx, 0, &err) == 0 && tb_test_sock_handshake(s, key) == 0);
  CHECK(rd_all(s, buf, 2, &err) == 0 && memcmp(buf, "go", 2) == 0);
  sealed = s->seal != NULL;
  CHECK(tb_test_wr(s, big, BULK, &err) == (long)BULK);
  CHECK(s->out_len == s->out_off); /* nothing left queued once it returns */
  CHECK(s->e->stats.bytes_out == s->sent && s->sent > BULK);
  /* the client has it all: close_notify below finds room in the kernel */
  CHECK(rd_all(s, buf, 2, &err) == 0 && memcmp(buf, "ok", 2) == 0);
  for (int k = 0; k < r.key_updates; k++) {
    CHECK(tb_sock_key_update(s, &err) == 0);
    memset(buf, k, sizeof buf);
    CHECK(tb_test_wr(s, buf, sizeof buf, &err) == (long)sizeof buf);
    CHECK(rd_all(s, buf, 1, &err) == 0 && buf[0] == (uint8_t)k);
  }
  tb_sock_close_notify(s);
  pthread_join(client, NULL);
  CHECK(r.sealed == sealed);
  printf("socket-seal: %-28s %s, %s\n", what, SSL_get_cipher_name(s->e->ssl),
         sealed ? "sealed by the socket BIO" : "sealed by OpenSSL");
  tb_sock_free(s);
  free(big);
  return sealed;
}

static SSL_CTX *ctx_for(int version, const char *suite, int seal) {
  tb_error err;
  SSL_CTX *c = tb_ctx_new(&err);
  CHECK(c != NULL);
  CHECK(SSL_CTX_set_min_proto_version(c, version) && SSL_CTX_set_max_proto_version(c, version));
  if (version == TLS1_3_VERSION)
    CHECK(SSL_CTX_set_ciphersuites(c, suite));
  else
    CHECK(SSL_CTX_set_cipher_list(c, suite));
  if (!seal)
    SSL_CTX_clear_options(c, SSL_OP_ENABLE_KTLS);
  return c;
}

int main(void) {
  static const struct {
    int version;
    const char *suite;
  } suites[] = {
      {TLS1_3_VERSION, "TLS_AES_128_GCM_SHA256"},
      {TLS1_3_VERSION, "TLS_AES_256_GCM_SHA384"},
      {TLS1_3_VERSION, "TLS_CHACHA20_POLY1305_SHA256"},
      {TLS1_2_VERSION, "ECDHE-ECDSA-AES128-GCM-SHA256"},
      {TLS1_2_VERSION, "ECDHE-ECDSA-AES256-GCM-SHA384"},
      {TLS1_2_VERSION, "ECDHE-ECDSA-CHACHA20-POLY1305"},
  };
  tb_addr a;
  SSL_CTX *c;
  size_t i;

  signal(SIGPIPE, SIG_IGN);
  key = tb_test_keymat("ec");
  listener = tb_test_listener(&a);
  CHECK(key && listener);
  port = a.port;

  if (!tb_seal_supported())
    printf("socket-seal: NOT SEALING: %s cannot hand its keys to a BIO; the exchanges run on OpenSSL's "
           "record layer\n", OpenSSL_version(OPENSSL_VERSION));
  for (i = 0; i < sizeof suites / sizeof suites[0]; i++) {
    c = ctx_for(suites[i].version, suites[i].suite, 1);
    CHECK(exchange(c, suites[i].suite) == tb_seal_supported());
    tb_ctx_free(c);
  }
  /* the switch (-Dtlsbridge.seal=false clears the option on the context) */
  c = ctx_for(TLS1_3_VERSION, "TLS_AES_128_GCM_SHA256", 0);
  CHECK(exchange(c, "(option cleared)") == 0);
  tb_ctx_free(c);

  tb_sock_free(listener);
  tb_keymat_free(key);
  return tb_test_finish("socket-seal");
}
