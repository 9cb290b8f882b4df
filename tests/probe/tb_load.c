/*
 * A known TLS load through a dlopen'ed libtlsbridge.so, with no JVM: pairs
 * of engines (client and server) talk in memory, and the driver itself
 * counts what crossed (handshakes and the TLS bytes each wrap produced and
 * each unwrap consumed) as the truth the probe's figures are checked
 * against.
 *
 *   tb_load LIB [--unlink] [--errors K] CONNS REQUESTS REQ_BYTES RESP_BYTES
 *   tb_load LIB [--unlink] [--errors K] --seconds S REQUESTS_PER_CONN REQ_BYTES RESP_BYTES
 *
 * Prints "ready PID" and waits for a line on stdin before the load, prints
 * the truth as one JSON line after it, then waits for stdin to close (so
 * the probe can be stopped while the process still exists). --unlink loads
 * a copy from a temporary directory and deletes it, as a provider that
 * extracts its library to /tmp does. --seconds runs a timed keep-alive load
 * and adds requests_per_s to the truth (the overhead benchmark's figure).
 * --errors K ends with K server engines fed plain HTTP (K engine errors).
 * --resume makes each connection offer the previous one's session.
 * --late-load S loads the library only after "go", then waits S seconds
 * before the load (as a provider loading it on first use).
 */
#include "tb.h"
#include "probe.h"
#include "selfsigned.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

/* The probe reads tb_stats through its own mirror of the layout. */
#define SAME_FIELD(f) _Static_assert(offsetof(tb_stats, f) == offsetof(struct tb_conn_stats, f), \
                                     "probe.h's tb_conn_stats no longer matches tb_stats: " #f)
SAME_FIELD(bytes_in);
SAME_FIELD(bytes_out);
SAME_FIELD(app_in);
SAME_FIELD(app_out);
SAME_FIELD(records_in);
SAME_FIELD(records_out);
SAME_FIELD(ns_read);
SAME_FIELD(ns_write);
SAME_FIELD(ns_handshake);
SAME_FIELD(calls);
SAME_FIELD(hs_start_ns);
_Static_assert(sizeof(tb_stats) == sizeof(struct tb_conn_stats), "tb_stats grew: mirror it in probe.h");

static struct api {
  SSL_CTX *(*ctx_new)(tb_error *);
  void (*ctx_free)(SSL_CTX *);
  tb_engine *(*engine_new)(SSL_CTX *, int, tb_error *);
  void (*engine_free)(tb_engine *);
  int (*begin)(tb_engine *);
  int (*wrap)(tb_engine *, const uint8_t *, size_t, uint8_t *, size_t, tb_result *);
  int (*unwrap)(tb_engine *, const uint8_t *, size_t, uint8_t *, size_t, tb_result *);
  void (*close_outbound)(tb_engine *);
  int (*task_done)(tb_engine *);
  void (*set_verify_result)(tb_engine *, int, int);
} api;

static struct truth {
  unsigned long long handshakes, resumed, bytes_in, bytes_out, app_in, app_out, conns, requests, errors;
} truth;

static EVP_PKEY *key;
static X509 *cert;

static void die(const char *what) {
  fprintf(stderr, "tb_load: %s\n", what);
  exit(1);
}

static void make_identity(void) {
  key = EVP_EC_gen("P-256");
  cert = key ? tb_test_selfsigned(key, "localhost") : NULL;
  if (!cert)
    die("cannot make a key and certificate");
}

#define SYM(field, name)                                  \
  do {                                                    \
    *(void **)&api.field = dlsym(h, name);                \
    if (!api.field)                                       \
      die("missing symbol " name);                        \
  } while (0)

/* Copies lib into a fresh directory, loads the copy and deletes it. */
static void *open_unlinked(const char *lib) {
  char dir[] = "/tmp/tb_load.XXXXXX", path[64], cmd[4200];
  void *h;
  if (!mkdtemp(dir))
    die("mkdtemp");
  snprintf(path, sizeof path, "%s/libtlsbridge.so", dir);
  snprintf(cmd, sizeof cmd, "cp '%s' '%s'", lib, path);
  if (system(cmd) != 0)
    die("cannot copy the library");
  h = dlopen(path, RTLD_NOW);
  unlink(path);
  rmdir(dir);
  return h;
}

static void load_api(const char *lib, int unlinked) {
  void *h = unlinked ? open_unlinked(lib) : dlopen(lib, RTLD_NOW);
  if (!h) {
    fprintf(stderr, "tb_load: dlopen: %s\n", dlerror());
    exit(1);
  }
  SYM(ctx_new, "tb_ctx_new");
  SYM(ctx_free, "tb_ctx_free");
  SYM(engine_new, "tb_engine_new");
  SYM(engine_free, "tb_engine_free");
  SYM(begin, "tb_engine_begin");
  SYM(wrap, "tb_engine_wrap");
  SYM(unwrap, "tb_engine_unwrap");
  SYM(close_outbound, "tb_engine_close_outbound");
  SYM(task_done, "tb_engine_task_done");
  SYM(set_verify_result, "tb_engine_set_verify_result");
}

/* One direction of the in-memory wire. */
typedef struct wire {
  uint8_t buf[1 << 17];
  size_t len;
} wire;

static void answer_task(tb_engine *e) {
  if (e->task == TB_TASK_VERIFY)
    api.set_verify_result(e, 1, 0);
  else if (e->task == TB_TASK_CERT && !SSL_use_cert_and_key(e->ssl, cert, key, NULL, 1))
    die("cannot install the certificate");
  api.task_done(e);
}

/* Wraps src (may be empty) onto the wire; returns bytes produced. */
static size_t send_on(tb_engine *e, const uint8_t *src, size_t n, wire *w) {
  size_t total = 0;
  for (;;) {
    tb_result r;
    if (e->task != TB_TASK_NONE)
      answer_task(e);
    if (api.wrap(e, src, n, w->buf + w->len, sizeof w->buf - w->len, &r) < 0)
      die("wrap failed");
    w->len += r.produced;
    total += r.produced;
    truth.bytes_out += r.produced;
    src += r.consumed;
    n -= r.consumed;
    if (r.produced == 0 && n == 0)
      return total;
    if (r.produced == 0 && r.consumed == 0)
      die("wrap made no progress");
  }
}

/* Unwraps everything on the wire into sink; returns plaintext bytes. */
static size_t recv_on(tb_engine *e, wire *w) {
  static uint8_t sink[1 << 17];
  size_t plain = 0, off = 0;
  while (off < w->len) {
    tb_result r;
    if (e->task != TB_TASK_NONE)
      answer_task(e);
    if (api.unwrap(e, w->buf + off, w->len - off, sink, sizeof sink, &r) < 0)
      die("unwrap failed");
    truth.bytes_in += r.consumed;
    off += r.consumed;
    plain += r.produced;
    if (r.consumed == 0 && e->task == TB_TASK_NONE)
      break;
  }
  memmove(w->buf, w->buf + off, w->len - off);
  w->len -= off;
  return plain;
}

static void handshake(tb_engine *c, tb_engine *s, wire *c2s, wire *s2c) {
  api.begin(c);
  api.begin(s);
  for (int i = 0; i < 32; i++) {
    send_on(c, NULL, 0, c2s);
    recv_on(s, c2s);
    send_on(s, NULL, 0, s2c);
    recv_on(c, s2c);
    if ((c->flags & TB_F_HS_DONE) && (s->flags & TB_F_HS_DONE) && !c2s->len && !s2c->len) {
      /* TLS 1.3 session tickets are still to be read by the client */
      truth.handshakes += 2;
      return;
    }
  }
  die("handshake did not finish");
}

/* --resume: each connection offers the session of the one before */
static int resume;
static SSL_SESSION *resume_from;

static void one_connection(SSL_CTX *ctx, int requests, size_t req, size_t resp) {
  static wire c2s, s2c;
  static uint8_t reqbuf[1 << 16], respbuf[1 << 16];
  tb_error err;
  tb_engine *c = api.engine_new(ctx, 1, &err), *s = api.engine_new(ctx, 0, &err);
  if (!c || !s)
    die("engine_new failed");
  c2s.len = s2c.len = 0;
  if (resume_from && !SSL_set_session(c->ssl, resume_from))
    die("cannot offer the saved session");
  handshake(c, s, &c2s, &s2c);
  truth.resumed += (unsigned long long)(SSL_session_reused(c->ssl) + SSL_session_reused(s->ssl));
  for (int i = 0; i < requests; i++) {
    send_on(c, reqbuf, req, &c2s);
    truth.app_out += req;
    truth.app_in += recv_on(s, &c2s);
    send_on(s, respbuf, resp, &s2c);
    truth.app_out += resp;
    truth.app_in += recv_on(c, &s2c);
    truth.requests++;
  }
  if (resume) { /* after the requests: TLS 1.3 tickets arrive with the first response */
    SSL_SESSION_free(resume_from);
    resume_from = SSL_get1_session(c->ssl);
  }
  api.close_outbound(c);
  send_on(c, NULL, 0, &c2s);
  recv_on(s, &c2s);
  send_on(s, NULL, 0, &s2c);
  recv_on(c, &s2c);
  api.engine_free(c);
  api.engine_free(s);
  truth.conns++;
}

/* A server engine fed plain HTTP instead of a ClientHello: one error. */
static void failed_connection(SSL_CTX *ctx) {
  static const uint8_t junk[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  uint8_t sink[256];
  tb_result r;
  tb_error err;
  tb_engine *s = api.engine_new(ctx, 0, &err);
  if (!s)
    die("engine_new failed");
  api.begin(s);
  if (api.unwrap(s, junk, sizeof junk - 1, sink, sizeof sink, &r) == 0)
    die("plain HTTP was accepted as TLS");
  truth.errors++;
  api.engine_free(s);
}

static uint64_t cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  char line[64];
  int unlinked = 0, a = 2;
  double seconds = 0, late = 0, t0, elapsed;
  uint64_t cpu0, cpu;
  long conns = 0, errors = 0, requests, i;
  size_t req, resp;
  tb_error err;
  SSL_CTX *ctx;
  for (; argc > a && strncmp(argv[a], "--", 2) == 0; a++) {
    if (strcmp(argv[a], "--unlink") == 0)
      unlinked = 1;
    else if (strcmp(argv[a], "--seconds") == 0 && argc > a + 1)
      seconds = atof(argv[++a]);
    else if (strcmp(argv[a], "--errors") == 0 && argc > a + 1)
      errors = atol(argv[++a]);
    else if (strcmp(argv[a], "--resume") == 0)
      resume = 1;
    else if (strcmp(argv[a], "--late-load") == 0 && argc > a + 1)
      late = atof(argv[++a]);
    else
      break;
  }
  if (seconds <= 0 && argc > a)
    conns = atol(argv[a++]);
  if (argc != a + 3 || (seconds <= 0 && conns <= 0)) {
    fprintf(stderr, "usage: tb_load LIB [--unlink] [--errors K] [--resume] [--late-load S] (CONNS | --seconds S) "
                    "REQUESTS REQ_BYTES RESP_BYTES\n");
    return 2;
  }
  requests = atol(argv[a]);
  req = (size_t)atol(argv[a + 1]);
  resp = (size_t)atol(argv[a + 2]);
  if (req > 65536 || resp > 65536)
    die("request and response sizes are at most 65536");
  make_identity();
  if (late <= 0)
    load_api(argv[1], unlinked);
  printf("ready %d\n", (int)getpid());
  fflush(stdout);
  if (!fgets(line, sizeof line, stdin))
    return 1;
  if (late > 0) {
    /* a provider that loads its library on first use: the probe must
     * notice the new mapping and attach before the load starts */
    load_api(argv[1], unlinked);
    printf("loaded\n");
    fflush(stdout);
    usleep((useconds_t)(late * 1e6));
  }
  ctx = api.ctx_new(&err);
  if (!ctx)
    die(err.msg);
  t0 = now_s();
  cpu0 = cpu_ns();
  if (seconds > 0) {
    while (now_s() - t0 < seconds)
      one_connection(ctx, (int)requests, req, resp);
  } else {
    for (i = 0; i < conns; i++)
      one_connection(ctx, (int)(requests / conns + (i < requests % conns)), req, resp);
  }
  elapsed = now_s() - t0;
  cpu = cpu_ns() - cpu0;
  for (i = 0; i < errors; i++)
    failed_connection(ctx);
  printf("{\"handshakes\":%llu,\"resumed\":%llu,\"bytes_in\":%llu,\"bytes_out\":%llu,\"app_bytes_in\":%llu,"
         "\"app_bytes_out\":%llu,\"connections\":%llu,\"requests\":%llu,\"seconds\":%.3f,"
         "\"requests_per_s\":%.1f,\"errors\":%llu,\"cpu_ns\":%llu}\n",
         truth.handshakes, truth.resumed, truth.bytes_in, truth.bytes_out, truth.app_in, truth.app_out, truth.conns,
         truth.requests, elapsed, (double)truth.requests / elapsed, truth.errors,
         (unsigned long long)cpu);
  fflush(stdout);
  while (fgets(line, sizeof line, stdin))
    ;
  SSL_SESSION_free(resume_from);
  api.ctx_free(ctx);
  return 0;
}
