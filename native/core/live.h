#ifndef TB_LIVE_H
#define TB_LIVE_H
#include "tb.h"

/* How many native objects are alive now, for leak checks (a certificate
 * reload, a soak): a count that returns to its baseline proves the objects
 * were freed, where RSS only hints at it. */
enum tb_live_kind {
  TB_LIVE_CONTEXTS = 0, /* SSL_CTX, until OpenSSL frees it (its last reference) */
  TB_LIVE_SSLS = 1,     /* SSL: one per engine or socket connection */
  TB_LIVE_KEYS = 2,     /* tb_keymat: key material parsed from a KeyManager */
  TB_LIVE_KINDS = 3
};

/* Registers the SSL_CTX and SSL counters; 0 on failure. Idempotent, and must
 * run before the first SSL_CTX is made (tb_ctx_new calls it). */
int tb_live_init(void);
void tb_live_add(int kind, int delta);
long tb_live_count(int kind); /* -1 for an unknown kind */
#endif
