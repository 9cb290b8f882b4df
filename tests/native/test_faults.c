/* Allocation failures (TB_FAULT_INJECTION builds): a client/server engine
 * pair does context creation, key loading, a handshake, data both ways and
 * close_notify both ways; run N fails the Nth allocation (tlsbridge's or
 * OpenSSL's) once, for every N the whole life makes. Each run must end in
 * a reported error or in full success with the right bytes: no crash, no
 * stall, no leak (LeakSanitizer in the sanitizer build), no sanitizer report.
 * To read a failure: TB_FAULT_FROM=N starts at run N, TB_FAULT_VERBOSE=1
 * names each run, TB_FAULT_TRACE=1 prints where the failed allocation was. */
#include "test_support.h"
#include "ciphers.h"
#include "tb_alloc.h"

#include <stdlib.h>
#include <string.h>

static unsigned char *kder, *cder;
static int klen, clen;
static long n_ok, n_err, n_stall;
static int kinds[16];

typedef struct side {
  tb_engine *e;
  uint8_t out[1 << 16];
  size_t out_len;
} side;

/* A failed call must say why. */
static int failed(const tb_error *err, long nth, const char *where) {
  if (err->kind == TB_ERR_NONE || err->msg[0] == '\0') {
    fprintf(stderr, "fault %ld: %s failed without an error\n", nth, where);
    tb_test_failures++;
  }
  kinds[err->kind & 15]++;
  return -1;
}

/* One wrap and one unwrap of what the peer sent: -1 error, else progress. */
static int step(side *me, side *peer, tb_keymat *key, long nth) {
  tb_result r;
  uint8_t sink[TB_MAX_PLAINTEXT];
  int progress = 0;
  if (me->e->task != TB_TASK_NONE) {
    tb_error err;
    if (me->e->task == TB_TASK_VERIFY)
      tb_engine_set_verify_result(me->e, 1, 0);
    else if (me->e->task == TB_TASK_CERT && !(me->e->flags & TB_F_CLIENT))
      tb_keymat_use(me->e, key, &err); /* a failure here fails the handshake later */
    if (tb_engine_task_done(me->e) < 0)
      return failed(&me->e->err, nth, "task");
    progress = 1;
  }
  if (tb_engine_wrap(me->e, NULL, 0, me->out + me->out_len, sizeof me->out - me->out_len, &r) < 0)
    return failed(&me->e->err, nth, "wrap");
  me->out_len += r.produced;
  progress |= r.produced > 0;
  if (peer->out_len > 0) {
    if (tb_engine_unwrap(me->e, peer->out, peer->out_len, sink, sizeof sink, &r) < 0)
      return failed(&me->e->err, nth, "unwrap");
    memmove(peer->out, peer->out + r.consumed, peer->out_len - r.consumed);
    peer->out_len -= r.consumed;
    progress |= r.consumed > 0;
  }
  return progress;
}

static int handshake(side *c, side *s, tb_keymat *key, long nth) {
  int i;
  tb_engine_begin(c->e);
  tb_engine_begin(s->e);
  for (i = 0; i < 64; i++) {
    int a = step(c, s, key, nth), b;
    if (a < 0)
      return -1;
    if ((b = step(s, c, key, nth)) < 0)
      return -1;
    if ((c->e->flags & TB_F_HS_DONE) && (s->e->flags & TB_F_HS_DONE) && !a && !b)
      return 0;
    if (!a && !b)
      break;
  }
  fprintf(stderr, "fault %ld: handshake stalled without an error\n", nth);
  n_stall++;
  return -1;
}

/* from -> to: n bytes of a pattern, checked on arrival. */
static int deliver(side *from, side *to, size_t n, long nth) {
  static uint8_t msg[40000], got[40000], wire[1 << 16];
  size_t sent = 0, wlen = 0, woff = 0, glen = 0, i;
  tb_result r;
  for (i = 0; i < n; i++)
    msg[i] = (uint8_t)(i * 7 + n);
  while (sent < n) {
    if (tb_engine_wrap(from->e, msg + sent, n - sent, wire + wlen, sizeof wire - wlen, &r) < 0)
      return failed(&from->e->err, nth, "wrap data");
    if (r.consumed == 0)
      break;
    sent += r.consumed;
    wlen += r.produced;
  }
  while (woff < wlen) {
    if (tb_engine_unwrap(to->e, wire + woff, wlen - woff, got + glen, sizeof got - glen, &r) < 0)
      return failed(&to->e->err, nth, "unwrap data");
    if (r.consumed == 0)
      break;
    woff += r.consumed;
    glen += r.produced;
  }
  if (sent != n || glen != n || memcmp(msg, got, n) != 0) {
    fprintf(stderr, "fault %ld: %zu of %zu bytes arrived (sent %zu) and no error\n", nth, glen, n, sent);
    tb_test_failures++;
    return -1;
  }
  return 0;
}

static int close_both(side *c, side *s, long nth) {
  tb_result r;
  uint8_t sink[256];
  tb_engine_close_outbound(c->e);
  c->out_len = 0;
  if (tb_engine_wrap(c->e, NULL, 0, c->out, sizeof c->out, &r) < 0)
    return failed(&c->e->err, nth, "wrap close_notify");
  if (tb_engine_unwrap(s->e, c->out, r.produced, sink, sizeof sink, &r) < 0)
    return failed(&s->e->err, nth, "unwrap close_notify");
  if (r.status != TB_CLOSED)
    return 0; /* e.g. the server's shutdown could not allocate: it simply stays open */
  if (tb_engine_wrap(s->e, NULL, 0, s->out, sizeof s->out, &r) < 0)
    return failed(&s->e->err, nth, "wrap reply close_notify");
  if (tb_engine_unwrap(c->e, s->out, r.produced, sink, sizeof sink, &r) < 0)
    return failed(&c->e->err, nth, "unwrap reply close_notify");
  return 0;
}

/* One life: 0 when it ran to the end, -1 when a call reported an error.
 * With a shared context, only the connection's own allocations count. */
static int life(SSL_CTX *shared, int version, long nth) {
  static side c, s;
  const uint8_t *certs[1] = {cder};
  size_t lens[1] = {(size_t)clen};
  tb_error err;
  SSL_CTX *ctx;
  tb_keymat *key;
  int rc = -1;
  memset(&err, 0, sizeof err);
  if (!shared)
    tb_fault_arm(nth);
  if (!(ctx = shared ? shared : tb_ctx_new(&err)))
    return failed(&err, nth, "context");
  if (shared) {
    SSL_CTX_up_ref(shared);
    tb_fault_arm(nth); /* counted from here: the shared context is not this life's */
  }
  if (!(key = tb_keymat_from_der(kder, (size_t)klen, certs, lens, 1, &err))) {
    tb_ctx_free(ctx);
    return failed(&err, nth, "key");
  }
  c.out_len = s.out_len = 0;
  c.e = tb_engine_new(ctx, 1, &err);
  s.e = c.e ? tb_engine_new(ctx, 0, &err) : NULL;
  if (!s.e)
    failed(&err, nth, "engine");
  else if (tb_configure(c.e->ssl, NULL, NULL, 0, version, &err) < 0)
    failed(&err, nth, "configure");
  else if (handshake(&c, &s, key, nth) == 0 && deliver(&c, &s, 20000, nth) == 0 &&
           deliver(&s, &c, 100, nth) == 0 && close_both(&c, &s, nth) == 0)
    rc = 0;
  tb_engine_free(c.e);
  tb_engine_free(s.e);
  tb_keymat_free(key);
  tb_ctx_free(ctx);
  return rc;
}

static void walk(int version, int own_context) {
  long total, nth;
  tb_error err;
  SSL_CTX *shared = own_context ? NULL : tb_ctx_new(&err);
  CHECK(own_context || shared);
  CHECK(life(shared, version, 0) == 0); /* also warms OpenSSL's one-time init up */
  CHECK(life(shared, version, 0) == 0);
  total = tb_fault_count();
  n_ok = n_err = n_stall = 0;
  memset(kinds, 0, sizeof kinds);
  /* The count can differ a little from run to run; go on until the armed
   * allocation is past the end of a life. */
  nth = getenv("TB_FAULT_FROM") ? atol(getenv("TB_FAULT_FROM")) : 1; /* to replay one run */
  for (; nth < 100000; nth++) {
    int rc = life(shared, version, nth);
    if (tb_fault_count() < nth)
      break;
    if (getenv("TB_FAULT_VERBOSE")) /* which run hangs, should one */
      fprintf(stderr, "... %ld\n", nth);
    if (rc == 0)
      n_ok++;
    else
      n_err++;
  }
  tb_fault_arm(0);
  tb_ctx_free(shared);
  printf("TLS 0x%x%s: %ld allocations in one life; %ld runs: %ld errors (ssl %d, handshake %d, protocol %d, "
         "memory %d), %ld unaffected, %ld stalls\n",
         version, own_context ? " (context too)" : "", total, nth - 1, n_err, kinds[TB_ERR_SSL], kinds[TB_ERR_HANDSHAKE], kinds[TB_ERR_PROTOCOL],
         kinds[TB_ERR_MEMORY], n_ok, n_stall);
  CHECK(n_stall == 0);
  CHECK(n_err > 0);
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  /* before anything else touches OpenSSL */
  if (!tb_fault_install()) {
    fprintf(stderr, "cannot install the allocation hook\n");
    return 1;
  }
  if (tb_test_key_der("ec", &kder, &klen, &cder, &clen) != 0) {
    fprintf(stderr, "cannot make a test key\n");
    return 1;
  }
  /* Context creation and key loading are the same for both versions:
   * walked once. */
  walk(TLS1_3_VERSION, 1);
  walk(TLS1_2_VERSION, 0);
  OPENSSL_free(kder);
  OPENSSL_free(cder);
  return tb_test_finish("fault");
}
