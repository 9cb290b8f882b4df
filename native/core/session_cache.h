#ifndef TB_SESSION_CACHE_H
#define TB_SESSION_CACHE_H
#include "tb.h"

typedef struct tb_client_cache tb_client_cache;

/* Creates (or re-limits) the cache of a context; cap 0 = unbounded, timeout in s (0 = session's own). */
int tb_client_cache_attach(SSL_CTX *ctx, size_t cap, long timeout);
tb_client_cache *tb_client_cache_of(SSL_CTX *ctx);
void tb_client_cache_put(tb_client_cache *c, const char *key, SSL_SESSION *s);
/* A session to offer (the caller owns one reference), or NULL. */
SSL_SESSION *tb_client_cache_get(tb_client_cache *c, const char *key);
void tb_client_cache_install(SSL_CTX *ctx);
/* Client: names the peer ("host:port") and offers its cached session, if any (returns 1). */
int tb_engine_set_peer(tb_engine *e, const char *key);
#endif
