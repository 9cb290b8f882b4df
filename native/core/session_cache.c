/* The client-side session cache, keyed by "host:port", so a new engine or
 * socket to the same peer resumes. It is shared by every connection of a
 * context and written from connections (new-session callback), so it has
 * its own lock; nothing here touches the SSL_CTX's own fields. */
#include "session_cache.h"
#include "tb_alloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BUCKETS 1024

typedef struct entry {
  struct entry *next;
  SSL_SESSION *sess;
  uint64_t stamp;
  char key[];
} entry;

struct tb_client_cache {
  pthread_mutex_t mu;
  entry *b[BUCKETS];
  size_t size, cap;
  long timeout;
  uint64_t clock;
};

static int cache_index = -1;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;

static void free_cache(tb_client_cache *c) {
  size_t i;
  if (!c)
    return;
  for (i = 0; i < BUCKETS; i++) {
    entry *e = c->b[i];
    while (e) {
      entry *n = e->next;
      SSL_SESSION_free(e->sess);
      free(e);
      e = n;
    }
  }
  pthread_mutex_destroy(&c->mu);
  free(c);
}

static void ex_free(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl, void *argp) {
  free_cache(ptr);
}

static void make_index(void) {
  cache_index = SSL_CTX_get_ex_new_index(0, "tlsbridge client cache", NULL, NULL, ex_free);
}

static uint32_t hash(const char *k) {
  uint32_t h = 2166136261u;
  while (*k)
    h = (h ^ (unsigned char)*k++) * 16777619u;
  return h % BUCKETS;
}

tb_client_cache *tb_client_cache_of(SSL_CTX *ctx) {
  pthread_once(&cache_once, make_index);
  return cache_index < 0 ? NULL : SSL_CTX_get_ex_data(ctx, cache_index);
}

int tb_client_cache_attach(SSL_CTX *ctx, size_t cap, long timeout) {
  tb_client_cache *c = tb_client_cache_of(ctx);
  if (c) {
    pthread_mutex_lock(&c->mu);
    c->cap = cap;
    c->timeout = timeout;
    pthread_mutex_unlock(&c->mu);
    return 0;
  }
  c = tb_calloc(1, sizeof *c);
  if (!c || pthread_mutex_init(&c->mu, NULL) != 0) {
    free(c);
    return -1;
  }
  c->cap = cap;
  c->timeout = timeout;
  if (!SSL_CTX_set_ex_data(ctx, cache_index, c)) {
    free_cache(c);
    return -1;
  }
  return 0;
}

static int expired(const tb_client_cache *c, SSL_SESSION *s) {
  long age = (long)time(NULL) - (long)SSL_SESSION_get_time(s);
  return !SSL_SESSION_is_resumable(s) || (c->timeout > 0 && age > c->timeout) ||
         age > (long)SSL_SESSION_get_timeout(s);
}

static void evict_oldest(tb_client_cache *c) {
  entry **victim = NULL;
  size_t i;
  for (i = 0; i < BUCKETS; i++) {
    entry **pp;
    for (pp = &c->b[i]; *pp; pp = &(*pp)->next)
      if (!victim || (*pp)->stamp < (*victim)->stamp)
        victim = pp;
  }
  if (victim) {
    entry *e = *victim;
    *victim = e->next;
    SSL_SESSION_free(e->sess);
    free(e);
    c->size--;
  }
}

void tb_client_cache_put(tb_client_cache *c, const char *key, SSL_SESSION *s) {
  entry **pp, *e;
  size_t klen = strlen(key);
  if (!c)
    return;
  e = tb_malloc(sizeof *e + klen + 1);
  if (!e || !SSL_SESSION_up_ref(s)) {
    free(e);
    return;
  }
  memcpy(e->key, key, klen + 1);
  e->sess = s;
  pthread_mutex_lock(&c->mu);
  e->stamp = ++c->clock;
  for (pp = &c->b[hash(key)]; *pp; pp = &(*pp)->next) {
    if (strcmp((*pp)->key, key) == 0) {
      entry *old = *pp;
      e->next = old->next;
      *pp = e;
      SSL_SESSION_free(old->sess);
      free(old);
      pthread_mutex_unlock(&c->mu);
      return;
    }
  }
  e->next = c->b[hash(key)];
  c->b[hash(key)] = e;
  c->size++;
  while (c->cap > 0 && c->size > c->cap)
    evict_oldest(c);
  pthread_mutex_unlock(&c->mu);
}

/* A TLS 1.3 ticket is taken out (use once, as RFC 8446 advises; the server
 * sends fresh ones); a TLS 1.2 session stays for the next connection. */
SSL_SESSION *tb_client_cache_get(tb_client_cache *c, const char *key) {
  entry **pp;
  SSL_SESSION *out = NULL;
  if (!c)
    return NULL;
  pthread_mutex_lock(&c->mu);
  for (pp = &c->b[hash(key)]; *pp; pp = &(*pp)->next) {
    entry *e = *pp;
    if (strcmp(e->key, key) != 0)
      continue;
    if (expired(c, e->sess) || SSL_SESSION_get_protocol_version(e->sess) >= TLS1_3_VERSION) {
      *pp = e->next;
      c->size--;
      if (!expired(c, e->sess))
        out = e->sess; /* our reference passes to the caller */
      else
        SSL_SESSION_free(e->sess);
      free(e);
    } else if (SSL_SESSION_up_ref(e->sess)) {
      e->stamp = ++c->clock;
      out = e->sess;
    }
    break;
  }
  pthread_mutex_unlock(&c->mu);
  return out;
}

/* OpenSSL hands every new client session (TLS 1.3 tickets arrive after the
 * handshake) to this callback; it is filed under the engine's peer key. */
static int new_session_cb(SSL *ssl, SSL_SESSION *sess) {
  tb_engine *e = tb_engine_of(ssl);
  if (e && (e->flags & TB_F_CLIENT) && e->peer_key[0])
    tb_client_cache_put(tb_client_cache_of(SSL_get_SSL_CTX(ssl)), e->peer_key, sess);
  return 0; /* the cache took its own reference */
}

void tb_client_cache_install(SSL_CTX *ctx) {
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_BOTH);
  SSL_CTX_sess_set_new_cb(ctx, new_session_cb);
}

int tb_engine_set_peer(tb_engine *e, const char *key) {
  SSL_SESSION *s;
  size_t n = strlen(key);
  if (n >= sizeof e->peer_key)
    n = sizeof e->peer_key - 1;
  memcpy(e->peer_key, key, n);
  e->peer_key[n] = '\0';
  s = tb_client_cache_get(tb_client_cache_of(SSL_get_SSL_CTX(e->ssl)), e->peer_key);
  if (!s)
    return 0;
  SSL_set_session(e->ssl, s);
  SSL_SESSION_free(s);
  return 1;
}
