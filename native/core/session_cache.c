/* The session caches of one SSLContext, and the token that ties a resumed
 * session to its full handshake.
 *
 * Every SSL_CTX made for one SSLContext shares one store (ex_data, counted
 * references), so a second init keeps the sessions, as SunJSSE keeps its
 * session contexts (tb_ctx_share, which also carries the ticket keys over).
 * OpenSSL's internal cache is off: both caches here have their own lock,
 * and their size and timeout change under it, so a limit set on a live
 * context never writes the SSL_CTX. Client sessions are filed by the peer
 * and the identity asked of it (host:port, SNI, endpoint identification:
 * the key is Java's), server sessions by id (TLS 1.2, and TLS 1.3 without
 * tickets).
 *
 * Each new session gets a random origin token in OpenSSL's ticket app data:
 * it travels inside stateless tickets and is copied to every session derived
 * from the session (TLS 1.3 tickets), so Java can find what the full
 * handshake established when the session is resumed. */
#include "session_cache.h"
#include "ctx_shared.h"
#include "tb_alloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#define BUCKETS 1024
#define ORIGIN_LEN 16
#define PEER_KEY_MAX 640 /* bytes of a client's cache key, its NUL included */
#define FOREVER (86400L * 365) /* timeout 0 means no limit, as in JSSE */

typedef struct entry {
  struct entry *chain;         /* next in the bucket */
  struct entry *older, *newer; /* use order, for eviction */
  SSL_SESSION *sess;
  size_t klen;
  unsigned char key[];
} entry;

typedef struct cache {
  pthread_mutex_t mu;
  entry *b[BUCKETS];
  entry *oldest, *newest;
  size_t size, cap; /* cap 0: unbounded */
  long timeout;     /* seconds, 0: the session's own */
} cache;

/* Origins of sessions the application invalidated lately: a TLS 1.3
 * ticket that arrives after invalidate() on a connection still open is not
 * kept. Bounded: older ones can only come back through such a late ticket. */
#define REVOKED 32

struct tb_sessions {
  tb_shared base;
  cache client, server;
  unsigned char revoked[REVOKED][ORIGIN_LEN]; /* under client.mu */
  unsigned n_revoked, next_revoked;
};

static tb_ctx_slot store_slot = TB_CTX_SLOT("tlsbridge sessions");

static uint32_t hash(const unsigned char *k, size_t n) {
  uint32_t h = 2166136261u;
  while (n--)
    h = (h ^ *k++) * 16777619u;
  return h % BUCKETS;
}

static entry **slot(cache *c, const unsigned char *k, size_t n) {
  entry **pp = &c->b[hash(k, n)];
  while (*pp && !((*pp)->klen == n && memcmp((*pp)->key, k, n) == 0))
    pp = &(*pp)->chain;
  return pp;
}

static void age_unlink(cache *c, entry *e) {
  if (e->older)
    e->older->newer = e->newer;
  else
    c->oldest = e->newer;
  if (e->newer)
    e->newer->older = e->older;
  else
    c->newest = e->older;
  e->older = e->newer = NULL;
}

static void age_push(cache *c, entry *e) {
  e->older = c->newest;
  e->newer = NULL;
  if (c->newest)
    c->newest->newer = e;
  else
    c->oldest = e;
  c->newest = e;
}

/* Keys are unique, so the slot of e's key is e's. */
static void drop(cache *c, entry *e) {
  *slot(c, e->key, e->klen) = e->chain;
  age_unlink(c, e);
  SSL_SESSION_free(e->sess);
  free(e);
  c->size--;
}

static int too_old(long timeout, SSL_SESSION *s) {
  long age = (long)time(NULL) - (long)SSL_SESSION_get_time(s);
  return !SSL_SESSION_is_resumable(s) || (timeout > 0 && age > timeout) || age > (long)SSL_SESSION_get_timeout(s);
}

/* Lock held. */
static int expired(const cache *c, SSL_SESSION *s) {
  return too_old(c->timeout, s);
}

/* Over the size limit, or expired at the old end: constant work per new
 * session, as in the Java session context. */
static void trim(cache *c) {
  while (c->oldest && ((c->cap > 0 && c->size > c->cap) || expired(c, c->oldest->sess)))
    drop(c, c->oldest);
}

static int cache_init(cache *c, size_t cap, long timeout) {
  memset(c, 0, sizeof *c);
  c->cap = cap;
  c->timeout = timeout;
  return pthread_mutex_init(&c->mu, NULL) == 0 ? 0 : -1;
}

static void cache_destroy(cache *c) {
  while (c->oldest)
    drop(c, c->oldest);
  pthread_mutex_destroy(&c->mu);
}

static void cache_limits(cache *c, size_t cap, long timeout) {
  pthread_mutex_lock(&c->mu);
  c->cap = cap;
  c->timeout = timeout;
  trim(c);
  pthread_mutex_unlock(&c->mu);
}

static long cache_timeout(cache *c) {
  long t;
  pthread_mutex_lock(&c->mu);
  t = c->timeout;
  pthread_mutex_unlock(&c->mu);
  return t;
}

static void cache_put(cache *c, const unsigned char *key, size_t klen, SSL_SESSION *s) {
  entry *e = tb_malloc(sizeof *e + klen), **pp;
  if (!e || !SSL_SESSION_up_ref(s)) {
    free(e);
    return;
  }
  memcpy(e->key, key, klen);
  e->klen = klen;
  e->sess = s;
  pthread_mutex_lock(&c->mu);
  pp = slot(c, key, klen);
  if (*pp)
    drop(c, *pp);
  e->chain = c->b[hash(key, klen)];
  c->b[hash(key, klen)] = e;
  age_push(c, e);
  c->size++;
  trim(c);
  pthread_mutex_unlock(&c->mu);
}

/* A TLS 1.3 session is taken out (a ticket is used once, as RFC 8446
 * advises; the server sends fresh ones); a TLS 1.2 session stays. The caller
 * owns one reference to the result. */
static SSL_SESSION *cache_get(cache *c, const unsigned char *key, size_t klen) {
  SSL_SESSION *out = NULL;
  entry *e;
  pthread_mutex_lock(&c->mu);
  e = *slot(c, key, klen);
  if (e && !expired(c, e->sess) && SSL_SESSION_up_ref(e->sess))
    out = e->sess;
  if (e && (!out || SSL_SESSION_get_protocol_version(out) >= TLS1_3_VERSION)) {
    drop(c, e);
  } else if (e) {
    age_unlink(c, e);
    age_push(c, e);
  }
  pthread_mutex_unlock(&c->mu);
  return out;
}

static void cache_remove(cache *c, const unsigned char *key, size_t klen) {
  entry *e;
  pthread_mutex_lock(&c->mu);
  e = *slot(c, key, klen);
  if (e)
    drop(c, e);
  pthread_mutex_unlock(&c->mu);
}

static int origin_is(SSL_SESSION *s, const unsigned char *tok, size_t n) {
  void *d = NULL;
  size_t len = 0;
  return SSL_SESSION_get0_ticket_appdata(s, &d, &len) && d && len == n && memcmp(d, tok, n) == 0;
}

/* Every entry descending from one full handshake goes: a walk, as
 * invalidate() is rare and the cache keys by peer, not by origin. */
static void cache_forget(cache *c, const unsigned char *tok, size_t n) {
  entry *e, *newer;
  pthread_mutex_lock(&c->mu);
  for (e = c->oldest; e; e = newer) {
    newer = e->newer;
    if (origin_is(e->sess, tok, n))
      drop(c, e);
  }
  pthread_mutex_unlock(&c->mu);
}

/* client.mu held */
static int revoked(const tb_sessions *st, SSL_SESSION *s) {
  unsigned i;
  for (i = 0; i < st->n_revoked; i++)
    if (origin_is(s, st->revoked[i], ORIGIN_LEN))
      return 1;
  return 0;
}

static void store_destroy(tb_shared *b) {
  tb_sessions *s = (tb_sessions *)b;
  cache_destroy(&s->client);
  cache_destroy(&s->server);
  free(s);
}

static tb_sessions *store_of(SSL_CTX *ctx) {
  return (tb_sessions *)tb_ctx_slot_get(ctx, &store_slot);
}

/* Only on a session no other connection can see yet. */
static void ensure_origin(SSL_SESSION *s) {
  void *d = NULL;
  size_t n = 0;
  unsigned char tok[ORIGIN_LEN];
  if (!s || (SSL_SESSION_get0_ticket_appdata(s, &d, &n) && d && n))
    return;
  if (RAND_bytes(tok, sizeof tok) == 1)
    SSL_SESSION_set1_ticket_appdata(s, tok, sizeof tok);
}

/* The session's lifetime is set when it is made, from the server cache's
 * timeout of the moment; stateless tickets carry it. */
static void set_lifetime(tb_sessions *st, SSL_SESSION *s) {
  long t = cache_timeout(&st->server);
  SSL_SESSION_set_timeout(s, t > 0 ? t : FOREVER);
}

/* Every new session, on both sides; OpenSSL hands it over before any other
 * connection can use it (TLS 1.3 clients: each ticket, after the handshake). */
static int new_session_cb(SSL *ssl, SSL_SESSION *sess) {
  tb_engine *e = tb_engine_of(ssl);
  tb_sessions *st = store_of(SSL_get_SSL_CTX(ssl));
  unsigned int n = 0;
  const unsigned char *id;
  if (!e || !st)
    return 0;
  ensure_origin(sess);
  if (e->flags & TB_F_CLIENT) {
    int gone;
    pthread_mutex_lock(&st->client.mu);
    gone = st->n_revoked > 0 && revoked(st, sess);
    pthread_mutex_unlock(&st->client.mu);
    if (e->peer_key && !gone)
      cache_put(&st->client, (const unsigned char *)e->peer_key, strlen(e->peer_key), sess);
    return 0;
  }
  /* a stateless TLS 1.3 ticket needs nothing kept here */
  if (SSL_SESSION_get_protocol_version(sess) >= TLS1_3_VERSION && !(SSL_get_options(ssl) & SSL_OP_NO_TICKET))
    return 0;
  set_lifetime(st, sess);
  id = SSL_SESSION_get_id(sess, &n);
  if (n > 0)
    cache_put(&st->server, id, n, sess);
  return 0; /* the cache took its own reference */
}

static SSL_SESSION *get_session_cb(SSL *ssl, const unsigned char *id, int len, int *copy) {
  tb_sessions *st = store_of(SSL_get_SSL_CTX(ssl));
  *copy = 0; /* cache_get's reference passes to OpenSSL */
  return st && len > 0 ? cache_get(&st->server, id, (size_t)len) : NULL;
}

static void remove_session_cb(SSL_CTX *ctx, SSL_SESSION *sess) {
  tb_sessions *st = store_of(ctx);
  unsigned int n = 0;
  const unsigned char *id = SSL_SESSION_get_id(sess, &n);
  if (st && n > 0)
    cache_remove(&st->server, id, n);
}

/* Server, before a ticket is sealed: a full handshake's session gets its
 * origin and lifetime. A resumed one keeps both (in TLS 1.2 it may be the
 * cached object other connections share). */
static int gen_ticket_cb(SSL *ssl, void *arg) {
  tb_sessions *st = store_of(SSL_get_SSL_CTX(ssl));
  SSL_SESSION *s = SSL_get_session(ssl);
  if (!s || SSL_session_reused(ssl))
    return 1;
  ensure_origin(s);
  if (st)
    set_lifetime(st, s);
  return 1;
}

/* A ticket older than the server cache's current timeout is not resumed:
 * a shorter timeout applies to tickets already out, as it does to cached
 * sessions. */
static SSL_TICKET_RETURN dec_ticket_cb(SSL *ssl, SSL_SESSION *ss, const unsigned char *name, size_t name_len,
                                       SSL_TICKET_STATUS status, void *arg) {
  tb_sessions *st;
  if (status != SSL_TICKET_SUCCESS && status != SSL_TICKET_SUCCESS_RENEW)
    return SSL_TICKET_RETURN_IGNORE_RENEW;
  st = store_of(SSL_get_SSL_CTX(ssl));
  if (st && ss && too_old(cache_timeout(&st->server), ss))
    return SSL_TICKET_RETURN_IGNORE_RENEW;
  return status == SSL_TICKET_SUCCESS ? SSL_TICKET_RETURN_USE : SSL_TICKET_RETURN_USE_RENEW;
}

/* A TLS 1.3 client's full-handshake session: its tickets, which arrive
 * later, are copies of it and inherit the origin. A TLS 1.2 client's
 * session got its origin in new_session_cb. */
static void info_cb(const SSL *ssl, int where, int ret) {
  if ((where & SSL_CB_HANDSHAKE_DONE) && !SSL_is_server(ssl) && !SSL_session_reused(ssl) &&
      SSL_version(ssl) >= TLS1_3_VERSION)
    ensure_origin(SSL_get_session(ssl));
}

int tb_sessions_install(SSL_CTX *ctx) {
  tb_sessions *st;
  if (store_of(ctx))
    return 0;
  if (!(st = tb_calloc(1, sizeof *st)))
    return -1;
  if (cache_init(&st->client, TB_SESSION_CACHE_SIZE, TB_SESSION_TIMEOUT) != 0) {
    free(st);
    return -1;
  }
  if (cache_init(&st->server, TB_SESSION_CACHE_SIZE, TB_SESSION_TIMEOUT) != 0) {
    pthread_mutex_destroy(&st->client.mu);
    free(st);
    return -1;
  }
  tb_shared_init(&st->base, store_destroy);
  if (tb_ctx_slot_attach(ctx, &store_slot, &st->base) != 0)
    return -1;
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_BOTH | SSL_SESS_CACHE_NO_INTERNAL);
  SSL_CTX_sess_set_new_cb(ctx, new_session_cb);
  SSL_CTX_sess_set_get_cb(ctx, get_session_cb);
  SSL_CTX_sess_set_remove_cb(ctx, remove_session_cb);
  SSL_CTX_set_info_callback(ctx, info_cb);
  SSL_CTX_set_timeout(ctx, TB_SESSION_TIMEOUT);
  return SSL_CTX_set_session_ticket_cb(ctx, gen_ticket_cb, dec_ticket_cb, NULL) == 1 ? 0 : -1;
}

int tb_sessions_share(SSL_CTX *ctx, SSL_CTX *prev) {
  return tb_ctx_slot_share(ctx, prev, &store_slot);
}

static int limits(SSL_CTX *ctx, int client, size_t cap, long timeout) {
  tb_sessions *st = store_of(ctx);
  if (!st)
    return -1;
  cache_limits(client ? &st->client : &st->server, cap, timeout);
  return 0;
}

int tb_client_cache_attach(SSL_CTX *ctx, size_t cap, long timeout) {
  return limits(ctx, 1, cap, timeout);
}

int tb_server_cache_limits(SSL_CTX *ctx, size_t cap, long timeout) {
  return limits(ctx, 0, cap, timeout);
}

int tb_session_origin(SSL *ssl, const unsigned char **tok, size_t *len) {
  void *d = NULL;
  size_t n = 0;
  SSL_SESSION *s = SSL_get_session(ssl);
  if (!s || !SSL_SESSION_get0_ticket_appdata(s, &d, &n) || !d || n == 0)
    return 0;
  *tok = d;
  *len = n;
  return 1;
}

int tb_sessions_forget(SSL_CTX *ctx, const unsigned char *origin, size_t len) {
  tb_sessions *st = store_of(ctx);
  if (!st)
    return -1;
  if (len != ORIGIN_LEN)
    return 0; /* no token of ours: nothing cached can carry it */
  pthread_mutex_lock(&st->client.mu);
  memcpy(st->revoked[st->next_revoked], origin, ORIGIN_LEN);
  st->next_revoked = (st->next_revoked + 1) % REVOKED;
  if (st->n_revoked < REVOKED)
    st->n_revoked++;
  pthread_mutex_unlock(&st->client.mu);
  cache_forget(&st->client, origin, len);
  cache_forget(&st->server, origin, len);
  return 0;
}

static int same_hash(const SSL_CIPHER *a, const SSL_CIPHER *b) {
  const EVP_MD *x = SSL_CIPHER_get_handshake_digest(a), *y = SSL_CIPHER_get_handshake_digest(b);
  return x && y && EVP_MD_get_type(x) == EVP_MD_get_type(y);
}

/* Whether this connection, as configured, may offer s (RFC 5246 7.4.1.2,
 * RFC 8446 4.2.11): its version within the enabled range; in TLS 1.2 its
 * very suite enabled, in TLS 1.3 an enabled suite with its hash (the PSK
 * works with any of them). Otherwise an OpenSSL server aborts the
 * handshake (illegal_parameter) instead of making a full one. */
static int offerable(SSL *ssl, SSL_SESSION *s) {
  int v = SSL_SESSION_get_protocol_version(s), lo = (int)SSL_get_min_proto_version(ssl),
      hi = (int)SSL_get_max_proto_version(ssl), i;
  const SSL_CIPHER *c = SSL_SESSION_get0_cipher(s);
  STACK_OF(SSL_CIPHER) *enabled = SSL_get_ciphers(ssl);
  if (!c || !enabled || (lo != 0 && v < lo) || (hi != 0 && v > hi))
    return 0;
  for (i = 0; i < sk_SSL_CIPHER_num(enabled); i++) {
    const SSL_CIPHER *x = sk_SSL_CIPHER_value(enabled, i);
    if (SSL_CIPHER_get_id(x) == SSL_CIPHER_get_id(c))
      return 1;
    if (v >= TLS1_3_VERSION && SSL_CIPHER_get_kx_nid(x) == NID_kx_any && same_hash(x, c))
      return 1;
  }
  return 0;
}

int tb_engine_set_peer(tb_engine *e, const char *key) {
  tb_sessions *st = store_of(SSL_get_SSL_CTX(e->ssl));
  SSL_SESSION *s;
  size_t n = strlen(key);
  int offered = 0;
  free(e->peer_key);
  e->peer_key = NULL;
  /* Only a client with a cache to file into keeps its key, on the heap and
   * as long as it is: servers and cacheless clients, most engines, never
   * need one. A key of PEER_KEY_MAX bytes or more (no host, port and
   * identity come near it) files and offers nothing, as the cache would
   * copy it into every entry. Without memory for the key, this connection
   * neither offers nor files a session. */
  if (!st || n >= PEER_KEY_MAX || !(e->peer_key = tb_malloc(n + 1)))
    return 0;
  memcpy(e->peer_key, key, n + 1);
  s = cache_get(&st->client, (const unsigned char *)e->peer_key, n);
  if (!s)
    return 0;
  /* one that may not be offered stays (TLS 1.2) until this connection's
   * full handshake files its own under the same key */
  if (offerable(e->ssl, s))
    offered = SSL_set_session(e->ssl, s) == 1;
  SSL_SESSION_free(s);
  return offered;
}
