/* Sealing that fails closed: each point where the BIO's seal can fail (the
 * cipher fetch and initialisation for a new key, the seal of a record, a
 * send that fails for good, a send the kernel takes only part of) is made
 * to fail, on the engine's BIO and on the socket BIO, and the test checks
 * the bytes that reach the wire and the error the caller gets. A first key
 * that cannot be taken leaves sealing to OpenSSL; after any later failure
 * nothing more leaves, not even OpenSSL's alert (which would go out as two
 * bytes without a record header), and no later call reads a buffer the
 * caller passed before. Built with its own copy of seal.c that has the
 * fault hooks (TB_SEAL_FAULTS), against the flavour it is linked with. */
#include "test_support.h"
#include "ciphers.h"
#include "seal.h"
#include "socket.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>

static uint8_t buf[1 << 17], wire[1 << 18], back[1 << 18];

/* 1 when p[0..n) is whole TLS records (the last may be cut short when
 * partial is set), each with a plausible header: what a peer can parse. */
static int records_only(const uint8_t *p, size_t n, int partial, size_t *count) {
  size_t off = 0, len;
  *count = 0;
  while (off < n) {
    if (n - off < 5)
      return partial;
    if (p[off] < 20 || p[off] > 24 || p[off + 1] != 3 || p[off + 2] > 4)
      return 0;
    len = 5 + ((size_t)p[off + 3] << 8 | p[off + 4]);
    if (len > TB_MAX_RECORD)
      return 0;
    if (off + len > n)
      return partial;
    off += len;
    ++*count;
  }
  return 1;
}

static int has(const char *msg, const char *part) {
  if (strstr(msg, part))
    return 1;
  fprintf(stderr, "expected \"%s\" in: %s\n", part, msg);
  return 0;
}

static void fill(uint8_t *p, size_t n, int salt) {
  size_t i;
  for (i = 0; i < n; i++)
    p[i] = (uint8_t)(i * 131 + (size_t)salt);
}

static void disarm(void) {
  tb_seal_fault(TB_SEAL_FAULT_FETCH, 0);
  tb_seal_fault(TB_SEAL_FAULT_INIT, 0);
  tb_seal_fault(TB_SEAL_FAULT_SEAL, 0);
}

static SSL_CTX *ctx13(const char *suite) {
  tb_error err;
  SSL_CTX *c = tb_ctx_new(&err);
  CHECK(c != NULL);
  CHECK(SSL_CTX_set_min_proto_version(c, TLS1_3_VERSION) && SSL_CTX_set_max_proto_version(c, TLS1_3_VERSION));
  CHECK(SSL_CTX_set_ciphersuites(c, suite));
  return c;
}

/* ---- the engine's BIO ---- */

/* Wraps msg (may be none) and what is queued until nothing more comes out,
 * into wire; returns the bytes produced, *rc the first failed wrap (-1) or
 * 0, *msg_err its message. */
static size_t wrap_all(tb_engine *e, const uint8_t *msg, size_t n, int *rc, char *msg_err) {
  tb_result r;
  size_t wlen = 0;
  int i;
  *rc = 0;
  for (i = 0; i < 16; i++) {
    int w = tb_engine_wrap(e, msg, n, wire + wlen, sizeof wire - wlen, &r);
    CHECK(ERR_peek_error() == 0);
    wlen += r.produced;
    msg += r.consumed;
    n -= r.consumed;
    if (w < 0 && *rc == 0) {
      *rc = -1;
      snprintf(msg_err, sizeof e->err.msg, "%s", e->err.msg);
      continue; /* what was written before the failure waits in the queue */
    }
    if (r.produced == 0 && (n == 0 || *rc < 0 || r.status == TB_CLOSED))
      break;
  }
  return wlen;
}

/* The peer opens every byte with OpenSSL's record layer: no error. */
static void peer_opens(tb_engine *to, size_t wlen, size_t *plain) {
  tb_result r;
  size_t off = 0;
  int i;
  *plain = 0;
  for (i = 0; i < 64 && off < wlen; i++) {
    int rc = tb_engine_unwrap(to, wire + off, wlen - off, back + *plain, sizeof back - *plain, &r);
    CHECK(rc == 0);
    if (rc < 0) {
      fprintf(stderr, "peer: %s\n", to->err.msg);
      return;
    }
    off += r.consumed;
    *plain += r.produced;
    if (r.consumed == 0 && r.produced == 0)
      break;
  }
  CHECK(off == wlen);
}

static void open_pair(tb_pair *p, SSL_CTX *ctx) {
  CHECK(tb_pair_open(p, ctx, "ec") == 0);
  CHECK(tb_pair_handshake(p) == 0);
}

/* A first key the BIO cannot take (fetch, then initialisation): OpenSSL
 * keeps sealing that direction, and everything arrives. */
static void engine_first_key(int point, const char *what) {
  SSL_CTX *ctx = ctx13("TLS_AES_128_GCM_SHA256");
  tb_pair p;
  int declined;
  CHECK(tb_pair_open(&p, ctx, "ec") == 0);
  tb_seal_fault(point, 1);
  CHECK(tb_pair_handshake(&p) == 0);
  disarm();
  declined = (p.client->io.seal == NULL) + (p.server->io.seal == NULL);
  CHECK(declined == 1);
  fill(buf, 40000, 1);
  CHECK(tb_exchange(p.client, p.server, buf, 40000, back, sizeof back) == 40000 && memcmp(buf, back, 40000) == 0);
  CHECK(tb_exchange(p.server, p.client, buf, 40000, back, sizeof back) == 40000 && memcmp(buf, back, 40000) == 0);
  printf("seal-fail: engine, first key, %s fails: declined, OpenSSL seals, 2 x 40000 bytes intact\n", what);
  tb_pair_close(&p);
  tb_ctx_free(ctx);
}

/* The client's own KeyUpdate, whose new key the BIO cannot take: the wrap
 * fails naming it, and what leaves is whole records (the KeyUpdate under
 * the old key), no alert in clear; later wraps send nothing. */
static void engine_rekey(int point, const char *what, const char *expect) {
  SSL_CTX *ctx = ctx13("TLS_AES_256_GCM_SHA384");
  tb_pair p;
  char msg[sizeof p.client->err.msg] = "";
  size_t wlen, n, plain;
  int rc;
  open_pair(&p, ctx);
  CHECK(p.client->io.seal != NULL);
  fill(buf, 1000, 2);
  CHECK(SSL_key_update(p.client->ssl, SSL_KEY_UPDATE_NOT_REQUESTED) == 1);
  tb_seal_fault(point, 1);
  wlen = wrap_all(p.client, buf, 1000, &rc, msg);
  disarm();
  CHECK(rc == -1 && has(msg, expect) && has(msg, "tlsbridge record sealing"));
  CHECK(tb_seal_failed(p.client->io.seal));
  CHECK(records_only(wire, wlen, 0, &n));
  peer_opens(p.server, wlen, &plain);
  CHECK(plain == 0);
  /* nothing after: no alert, no data, no close_notify */
  CHECK(wrap_all(p.client, buf, 1000, &rc, msg) == 0);
  tb_engine_close_outbound(p.client);
  CHECK(wrap_all(p.client, NULL, 0, &rc, msg) == 0);
  printf("seal-fail: engine, own KeyUpdate, %s fails: %zu record(s) out, then nothing (%s)\n", what, n, expect);
  tb_pair_close(&p);
  tb_ctx_free(ctx);
}

/* The peer asks for a KeyUpdate; the answer's new key cannot be taken: the
 * unwrap fails naming it; the server's KeyUpdate left under the old key,
 * nothing else. */
static void engine_answer_rekey(void) {
  SSL_CTX *ctx = ctx13("TLS_CHACHA20_POLY1305_SHA256");
  tb_pair p;
  tb_result r;
  char msg[sizeof p.client->err.msg] = "", msg2[sizeof msg] = "";
  size_t wlen, n, plain;
  int rc, rc2;
  open_pair(&p, ctx);
  fill(buf, 100, 3);
  CHECK(SSL_key_update(p.client->ssl, SSL_KEY_UPDATE_REQUESTED) == 1);
  wlen = wrap_all(p.client, buf, 100, &rc, msg);
  CHECK(rc == 0 && wlen > 0);
  tb_seal_fault(TB_SEAL_FAULT_INIT, 1); /* the server's next key */
  rc = tb_engine_unwrap(p.server, wire, wlen, back, sizeof back, &r);
  CHECK(ERR_peek_error() == 0);
  if (rc < 0)
    snprintf(msg, sizeof msg, "%s", p.server->err.msg);
  /* the answer goes out with the unwrap (the failure then) or the wrap after it */
  CHECK(rc == 0 || rc == -1);
  wlen = wrap_all(p.server, buf, 10, &rc2, msg2);
  disarm();
  CHECK((rc == -1 || rc2 == -1) && has(rc == -1 ? msg : msg2, "cannot initialise the cipher with the new key"));
  CHECK(records_only(wire, wlen, 0, &n) && n <= 1);
  peer_opens(p.client, wlen, &plain);
  CHECK(plain == 0);
  printf("seal-fail: engine, answering a KeyUpdate, initialisation fails: %zu record(s) out, then nothing\n", n);
  tb_pair_close(&p);
  tb_ctx_free(ctx);
}

/* The seal of a record fails (TLS 1.2 this time): the wrap fails naming
 * it; nothing leaves, then or later. */
static void engine_seal_fails(void) {
  tb_error err;
  SSL_CTX *ctx = tb_ctx_new(&err);
  tb_pair p;
  char msg[sizeof p.client->err.msg] = "";
  size_t wlen;
  int rc, i;
  CHECK(tb_pair_open(&p, ctx, "ec") == 0);
  for (i = 0; i < 2; i++)
    CHECK(tb_configure((i ? p.server : p.client)->ssl, "ECDHE-ECDSA-AES128-GCM-SHA256", NULL, TLS1_2_VERSION,
                       TLS1_2_VERSION, &err) == 0);
  CHECK(tb_pair_handshake(&p) == 0);
  fill(buf, 3000, 4);
  tb_seal_fault(TB_SEAL_FAULT_SEAL, 2); /* the first record goes, the second fails */
  wlen = wrap_all(p.client, buf, 3000, &rc, msg); /* one record */
  CHECK(rc == 0 && wlen > 0);
  wlen = wrap_all(p.client, buf, 3000, &rc, msg);
  disarm();
  CHECK(rc == -1 && has(msg, "the cipher failed to seal a record"));
  CHECK(wlen == 0);
  CHECK(wrap_all(p.client, buf, 10, &rc, msg) == 0);
  printf("seal-fail: engine, TLS 1.2, sealing a record fails: nothing out (%s)\n", msg);
  tb_pair_close(&p);
  tb_ctx_free(ctx);
}

/* ---- the socket BIO ---- */

/* A tap between the socket under test (a) and its peer (b): copies bytes
 * both ways and keeps what a sends. `hold` stops it reading from a; `cut`
 * closes a's far end, so a's next send fails (EPIPE). */
typedef struct tap {
  int a, b; /* far ends */
  atomic_int hold, cut, stop;
  uint8_t cap[1 << 22];
  atomic_size_t cap_len;
} tap;

static void *relay(void *arg) {
  tap *t = arg;
  uint8_t tmp[16384];
  while (!atomic_load(&t->stop)) {
    struct pollfd f[2] = {{t->a, POLLIN, 0}, {t->b, POLLIN, 0}};
    ssize_t n;
    if (atomic_load(&t->cut) && t->a >= 0) {
      close(t->a);
      t->a = -1;
    }
    if (atomic_load(&t->hold) || t->a < 0)
      f[0].fd = -1;
    if (poll(f, 2, 5) <= 0)
      continue;
    if (f[0].revents & (POLLIN | POLLHUP)) {
      n = read(t->a, tmp, sizeof tmp);
      if (n > 0) {
        size_t at = atomic_load(&t->cap_len);
        if (at + (size_t)n <= sizeof t->cap)
          memcpy(t->cap + at, tmp, (size_t)n), atomic_store(&t->cap_len, at + (size_t)n);
        CHECK(write(t->b, tmp, (size_t)n) == n);
      }
    }
    if (f[1].revents & (POLLIN | POLLHUP)) {
      n = read(t->b, tmp, sizeof tmp);
      if (n > 0 && t->a >= 0 && write(t->a, tmp, (size_t)n) != n)
        break;
      if (n <= 0)
        f[1].fd = -1;
    }
  }
  return NULL;
}

typedef struct conn {
  tap *t;
  pthread_t relay, server;
  tb_sock *a, *b;
  tb_keymat *key;
  SSL_CTX *ctx;
} conn;

static void *serve(void *arg) {
  conn *c = arg;
  tb_error err;
  CHECK(tb_sock_attach(c->b, c->ctx, 0, &err) == 0 && tb_test_sock_handshake(c->b, c->key) == 0);
  return NULL;
}

static void conn_open(conn *c, SSL_CTX *ctx, tb_keymat *key) {
  int pa[2], pb[2];
  tb_error err;
  memset(c, 0, sizeof *c);
  c->t = calloc(1, sizeof *c->t);
  CHECK(c->t && socketpair(AF_UNIX, SOCK_STREAM, 0, pa) == 0 && socketpair(AF_UNIX, SOCK_STREAM, 0, pb) == 0);
  c->t->a = pa[1];
  c->t->b = pb[1];
  c->a = tb_sock_wrap(pa[0], AF_UNIX, &err);
  c->b = tb_sock_wrap(pb[0], AF_UNIX, &err);
  c->key = key;
  c->ctx = ctx;
  CHECK(c->a && c->b);
  pthread_create(&c->relay, NULL, relay, c->t);
  pthread_create(&c->server, NULL, serve, c);
  CHECK(tb_sock_attach(c->a, ctx, 1, &err) == 0 && tb_test_sock_handshake(c->a, NULL) == 0);
  pthread_join(c->server, NULL);
  CHECK(c->a->seal != NULL);
}

static void conn_close(conn *c) {
  atomic_store(&c->t->stop, 1);
  pthread_join(c->relay, NULL);
  tb_sock_free(c->a);
  tb_sock_free(c->b);
  if (c->t->a >= 0)
    close(c->t->a);
  close(c->t->b);
  free(c->t);
}

/* What the tap saw from a after `from`, once it has settled. */
static size_t seen_after(tap *t, size_t from) {
  size_t n, m;
  do {
    n = atomic_load(&t->cap_len);
    usleep(50000);
    m = atomic_load(&t->cap_len);
  } while (m != n);
  return n - from;
}

/* A buffer whose pages go away after the call that passed it: a later read
 * from it faults at once (a crash, which ctest reports). */
static uint8_t *region(size_t n) {
  uint8_t *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(p != MAP_FAILED);
  fill(p, n, 9);
  return p;
}

/* The socket's own KeyUpdate (point: fetch or init fails) or the record's
 * seal fails: the write fails naming it, only whole records left, and the
 * next write (from another buffer; the first one unmapped) fails saying the
 * connection failed earlier. */
static void socket_local(int point, long nth, int key_update, const char *what, const char *expect) {
  SSL_CTX *ctx = ctx13("TLS_AES_128_GCM_SHA256");
  tb_keymat *key = tb_test_keymat("ec");
  conn c;
  tb_error err;
  size_t from, n, count;
  uint8_t *first, *second;
  long rc;
  conn_open(&c, ctx, key);
  CHECK(tb_test_wr(c.a, "hi", 2, &err) == 2 && tb_test_rd(c.b, back, 2, 5000, &err) == 2);
  from = seen_after(c.t, 0);
  first = region(1 << 16);
  tb_seal_fault(point, nth);
  /* the socket's own KeyUpdate leaves at once (startHandshake): its new key
   * is taken then, and its failure may surface there or at the next write */
  rc = key_update && tb_sock_key_update(c.a, &err) != 0 ? TB_SOCK_ERR : tb_test_wr(c.a, first, 1 << 16, &err);
  disarm();
  CHECK(rc == TB_SOCK_ERR && has(err.msg, expect));
  second = region(1 << 16);
  munmap(first, 1 << 16);
  CHECK(tb_test_wr(c.a, second, 1 << 16, &err) == TB_SOCK_ERR && has(err.msg, "the connection failed earlier"));
  munmap(second, 1 << 16);
  tb_sock_close_notify(c.a);
  n = seen_after(c.t, from);
  CHECK(records_only(c.t->cap + from, n, 0, &count));
  printf("seal-fail: socket, %s fails: %zu record(s) out after it (%zu bytes), then nothing\n", what, count, n);
  conn_close(&c);
  tb_keymat_free(key);
  tb_ctx_free(ctx);
}

/* The peer asks for a KeyUpdate; the answer's key cannot be taken: the
 * read fails naming it; then writes fail too. */
static void socket_answer(void) {
  SSL_CTX *ctx = ctx13("TLS_AES_256_GCM_SHA384");
  tb_keymat *key = tb_test_keymat("ec");
  conn c;
  tb_error err;
  size_t from, n, count;
  long rc;
  conn_open(&c, ctx, key);
  from = seen_after(c.t, 0);
  CHECK(tb_sock_key_update(c.b, &err) == 0); /* b's KeyUpdate and new key: out at once */
  tb_seal_fault(TB_SEAL_FAULT_FETCH, 1);     /* a's answer's key */
  CHECK(tb_test_wr(c.b, "x", 1, &err) == 1);
  /* the KeyUpdate is answered by the read or, once the byte is out, by the
   * next write */
  rc = tb_test_rd(c.a, back, 10, 5000, &err);
  if (rc == 1)
    rc = tb_test_wr(c.a, "more", 4, &err);
  disarm();
  CHECK(rc == TB_SOCK_ERR && has(err.msg, "cannot fetch the cipher for the new key"));
  CHECK(tb_test_wr(c.a, "more", 4, &err) == TB_SOCK_ERR && has(err.msg, "the connection failed earlier"));
  n = seen_after(c.t, from);
  CHECK(records_only(c.t->cap + from, n, 0, &count) && count <= 1);
  printf("seal-fail: socket, answering a KeyUpdate, fetch fails: %zu record(s) out after it, then nothing\n", count);
  conn_close(&c);
  tb_keymat_free(key);
  tb_ctx_free(ctx);
}

typedef struct big_write {
  tb_sock *s;
  uint8_t *p;
  size_t n;
  long rc;
  tb_error err;
} big_write;

static void *write_big(void *arg) {
  big_write *w = arg;
  w->rc = tb_test_wr(w->s, w->p, w->n, &w->err);
  return NULL;
}

/* The send fails for good (the peer's end is gone), at once (mid == 0) or
 * while a record waits half sent (the tap stops reading, the write waits,
 * then the end goes): the write fails with the send's error, and the next
 * write, from another buffer with the first one unmapped, fails without
 * OpenSSL 3.5 sealing the first again from its old address. */
static void socket_send_fails(int mid) {
  SSL_CTX *ctx = ctx13("TLS_AES_128_GCM_SHA256");
  tb_keymat *key = tb_test_keymat("ec");
  conn c;
  tb_error err;
  big_write w;
  pthread_t t;
  uint8_t *second;
  size_t from, n, count, len = mid ? 4u << 20 : 1000;
  conn_open(&c, ctx, key);
  from = seen_after(c.t, 0);
  memset(&w, 0, sizeof w);
  w.s = c.a;
  w.n = len;
  w.p = region(len);
  if (mid) {
    int small = 4096;
    CHECK(setsockopt(c.a->fd, SOL_SOCKET, SO_SNDBUF, &small, sizeof small) == 0);
    atomic_store(&c.t->hold, 1);
    pthread_create(&t, NULL, write_big, &w);
    usleep(200000);
    CHECK(c.a->out_len > c.a->out_off); /* a record waits, part sent */
  }
  atomic_store(&c.t->cut, 1);
  usleep(50000);
  if (mid)
    pthread_join(t, NULL);
  else
    write_big(&w);
  CHECK(w.rc == TB_SOCK_ERR && (has(w.err.msg, "Broken pipe") || has(w.err.msg, "Connection reset")));
  /* as long as the first: OpenSSL 3.5 would take it as the retry of the
   * first write and seal that one again from its old address (mapped
   * first, so the new buffer cannot take the old one's place) */
  second = region(len);
  munmap(w.p, len);
  CHECK(tb_test_wr(c.a, second, len, &err) == TB_SOCK_ERR && has(err.msg, "the connection failed earlier"));
  munmap(second, len);
  tb_sock_close_notify(c.a);
  n = seen_after(c.t, from);
  CHECK(records_only(c.t->cap + from, n, mid, &count));
  printf("seal-fail: socket, send fails%s: the next write fails too (%s)\n",
         mid ? " with a record half sent" : "", err.msg);
  conn_close(&c);
  tb_keymat_free(key);
  tb_ctx_free(ctx);
}

int main(void) {
  signal(SIGPIPE, SIG_IGN);
  printf("%s\n", OpenSSL_version(OPENSSL_VERSION));
  if (!tb_seal_supported()) {
    printf("seal-fail: NOT RUN: the BIO does not seal on %s (not a release the seal was checked with)\n",
           OpenSSL_version(OPENSSL_VERSION));
    return tb_test_finish("seal-fail");
  }
  engine_first_key(TB_SEAL_FAULT_FETCH, "the cipher fetch");
  engine_first_key(TB_SEAL_FAULT_INIT, "the cipher initialisation");
  engine_rekey(TB_SEAL_FAULT_FETCH, "the cipher fetch", "cannot fetch the cipher for the new key");
  engine_rekey(TB_SEAL_FAULT_INIT, "the cipher initialisation", "cannot initialise the cipher with the new key");
  engine_answer_rekey();
  engine_seal_fails();
  socket_local(TB_SEAL_FAULT_FETCH, 1, 1, "own KeyUpdate, the cipher fetch", "cannot fetch the cipher for the new key");
  socket_local(TB_SEAL_FAULT_INIT, 1, 1, "own KeyUpdate, the cipher initialisation",
               "cannot initialise the cipher with the new key");
  socket_local(TB_SEAL_FAULT_SEAL, 3, 0, "sealing the third record", "the cipher failed to seal a record");
  socket_answer();
  socket_send_fails(0);
  socket_send_fails(1);
  return tb_test_finish("seal-fail");
}
