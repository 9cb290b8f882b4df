#ifndef TB_SESSION_CACHE_H
#define TB_SESSION_CACHE_H
#include "tb.h"

/* SunJSSE's defaults for both sides. */
#define TB_SESSION_CACHE_SIZE 20480
#define TB_SESSION_TIMEOUT 86400

typedef struct tb_sessions tb_sessions;

/* At SSL_CTX creation: a new store and the callbacks that fill it. */
int tb_sessions_install(SSL_CTX *ctx);
/* A new SSL_CTX, not yet used, takes prev's store and ticket keys (SSLContext.init again). */
int tb_sessions_share(SSL_CTX *ctx, SSL_CTX *prev);
/* Limits of a side's cache, at any time; cap 0 = unbounded, timeout in s (0 = none). */
int tb_client_cache_attach(SSL_CTX *ctx, size_t cap, long timeout);
int tb_server_cache_limits(SSL_CTX *ctx, size_t cap, long timeout);
/* The origin token of the connection's session: 1 and the bytes, or 0. */
int tb_session_origin(SSL *ssl, const unsigned char **tok, size_t *len);
/* Client, after the protocols and suites are set: names the peer (the
 * cache key) and offers its cached session if this connection may (returns 1). */
int tb_engine_set_peer(tb_engine *e, const char *key);
/* SSLSession.invalidate(): no session from the full handshake with this
 * origin token is offered or resumed again. 0, or -1 without a store. */
int tb_sessions_forget(SSL_CTX *ctx, const unsigned char *origin, size_t len);
#endif
