#ifndef TB_TICKET_KEYS_H
#define TB_TICKET_KEYS_H
#include "tb.h"

/* Largest key file accepted: this many 80-byte records. */
#define TB_TICKET_KEYS_MAX 64

/* At SSL_CTX creation: a random key of its own and the ticket callback. */
int tb_ticket_keys_install(SSL_CTX *ctx);
/* A new SSL_CTX, not yet used, takes prev's keys (SSLContext.init again). */
int tb_ticket_keys_share(SSL_CTX *ctx, SSL_CTX *prev);
/* Keys from a file (docs/fleet.md), at any time; on error the keys in use stay. */
int tb_ticket_keys_load(SSL_CTX *ctx, const char *path, tb_error *err);
/* The file again if it changed since it was read: 1 reloaded, 0 unchanged
 * (or no file), -1 and err when the new content is refused (the keys stay). */
int tb_ticket_keys_refresh(SSL_CTX *ctx, tb_error *err);
/* How many keys decrypt tickets now (tests). */
int tb_ticket_keys_count(SSL_CTX *ctx);
#endif
