/* The client session cache's offer rules and the locally requested key
 * update, on the engine core: a cached session is offered only while its
 * version and suite are enabled, never after it was forgotten (invalidate()),
 * and each such connection still completes its handshake. */
#include "session_cache.h"
#include "ciphers.h"
#include "test_support.h"

#include <string.h>

#define PEER "localhost:1\n\n"

/* One connection to PEER with the given TLS 1.2 list / TLS 1.3 suites and
 * version range; returns whether a session was offered (-1 on a failed
 * handshake). The session stays resumable (as after close_notify). */
static int connect_once(SSL_CTX *ctx, const char *l12, const char *l13, int lo, int hi, int *reused,
                        unsigned char *origin, size_t *olen) {
  tb_error err;
  tb_pair p;
  int offered;
  const unsigned char *tok;
  size_t n;
  CHECK(tb_pair_open(&p, ctx, "ec") == 0);
  CHECK(tb_configure(p.client->ssl, l12, l13, lo, hi, &err) == 0);
  offered = tb_engine_set_peer(p.client, PEER);
  if (tb_pair_handshake(&p) != 0) {
    tb_pair_close(&p);
    return -1;
  }
  /* TLS 1.3 tickets come after the handshake */
  CHECK(tb_exchange(p.server, p.client, (const uint8_t *)"x", 1, (uint8_t[16]){0}, 16) == 1);
  *reused = SSL_session_reused(p.client->ssl);
  if (origin && tb_session_origin(p.client->ssl, &tok, &n) && n <= 64) {
    memcpy(origin, tok, n);
    *olen = n;
  }
  SSL_set_shutdown(p.client->ssl, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
  SSL_set_shutdown(p.server->ssl, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
  tb_pair_close(&p);
  return offered;
}

static void test_offer_rules(void) {
  tb_error err;
  SSL_CTX *ctx = tb_ctx_new(&err);
  const char *a128 = "ECDHE-ECDSA-AES128-GCM-SHA256", *a256 = "ECDHE-ECDSA-AES256-GCM-SHA384";
  unsigned char origin[64];
  size_t olen = 0;
  int reused = 0;
  CHECK(ctx != NULL);
  if (!ctx)
    return;
  /* TLS 1.2: same suite resumes; another suite is a full handshake, not an alert */
  CHECK(connect_once(ctx, a128, NULL, TLS1_2_VERSION, TLS1_2_VERSION, &reused, NULL, NULL) == 0 && !reused);
  CHECK(connect_once(ctx, a128, NULL, TLS1_2_VERSION, TLS1_2_VERSION, &reused, NULL, NULL) == 1 && reused);
  CHECK(connect_once(ctx, a256, NULL, TLS1_2_VERSION, TLS1_2_VERSION, &reused, origin, &olen) == 0 && !reused);
  /* the new suite's session replaced the old one */
  CHECK(connect_once(ctx, a256, NULL, TLS1_2_VERSION, TLS1_2_VERSION, &reused, NULL, NULL) == 1 && reused);
  /* forgotten (invalidate()): not offered again, a full handshake */
  CHECK(olen > 0 && tb_sessions_forget(ctx, origin, olen) == 0);
  CHECK(connect_once(ctx, a256, NULL, TLS1_2_VERSION, TLS1_2_VERSION, &reused, NULL, NULL) == 0 && !reused);
  /* a TLS 1.2 session is not offered to a TLS 1.3-only connection */
  CHECK(connect_once(ctx, NULL, "TLS_AES_128_GCM_SHA256", TLS1_3_VERSION, TLS1_3_VERSION, &reused, origin,
                     &olen) == 0 && !reused);
  /* TLS 1.3: a suite of the same hash may use the ticket, one of another hash may not */
  CHECK(connect_once(ctx, NULL, "TLS_CHACHA20_POLY1305_SHA256", TLS1_3_VERSION, TLS1_3_VERSION, &reused, NULL,
                     NULL) == 1 && reused);
  CHECK(connect_once(ctx, NULL, "TLS_AES_256_GCM_SHA384", TLS1_3_VERSION, TLS1_3_VERSION, &reused, origin,
                     &olen) == 0 && !reused);
  CHECK(connect_once(ctx, NULL, "TLS_AES_256_GCM_SHA384", TLS1_3_VERSION, TLS1_3_VERSION, &reused, NULL,
                     NULL) == 1 && reused);
  /* a TLS 1.3 ticket is not offered to a TLS 1.2-only connection */
  CHECK(connect_once(ctx, a128, NULL, TLS1_2_VERSION, TLS1_2_VERSION, &reused, NULL, NULL) == 0 && !reused);
  /* an over-long key files nothing and offers nothing, and drops the key set before */
  {
    tb_pair p;
    char key[1000];
    memset(key, 'a', sizeof key - 1);
    key[sizeof key - 1] = '\0';
    CHECK(tb_pair_open(&p, ctx, "ec") == 0);
    CHECK(tb_engine_set_peer(p.client, PEER) >= 0 && p.client->peer_key && strcmp(p.client->peer_key, PEER) == 0);
    CHECK(tb_engine_set_peer(p.client, key) == 0 && p.client->peer_key == NULL);
    tb_pair_close(&p);
  }
  tb_ctx_free(ctx);
}

/* tb_key_update: the KeyUpdate waits in the queue (NEED_WRAP), leaves with
 * the next wrap (FINISHED); the peer answers (NEED_WRAP, then FINISHED);
 * data goes on both ways. Refused before TLS 1.3 is established. */
static void test_key_update(void) {
  tb_error err;
  SSL_CTX *ctx = tb_ctx_new(&err);
  tb_pair p;
  tb_result r;
  uint8_t net[4096], app[4096], got[64];
  size_t n;
  int round;
  CHECK(tb_pair_open(&p, ctx, "ec") == 0);
  CHECK(tb_key_update(p.client, 1) == -1 && p.client->err.kind == TB_ERR_STATE);
  CHECK(tb_pair_handshake(&p) == 0);
  CHECK(SSL_version(p.client->ssl) == TLS1_3_VERSION);
  CHECK(tb_exchange(p.server, p.client, (const uint8_t *)"t", 1, got, sizeof got) == 1);
  for (round = 0; round < 4; round++) {
    tb_engine *a = round % 2 ? p.server : p.client, *b = round % 2 ? p.client : p.server;
    CHECK(tb_key_update(a, 1) == 0);
    CHECK(a->io.spill_len > 0);
    CHECK(tb_engine_hs_status(a, 0) == TB_HS_NEED_WRAP);
    CHECK(tb_engine_wrap(a, NULL, 0, net, sizeof net, &r) == 0);
    CHECK(r.produced > 0 && r.consumed == 0 && r.hs == TB_HS_FINISHED);
    CHECK(tb_engine_hs_status(a, 0) == TB_HS_NOT);
    n = r.produced;
    CHECK(tb_engine_unwrap(b, net, n, app, sizeof app, &r) == 0);
    CHECK(r.consumed == n && r.produced == 0 && r.hs == TB_HS_NEED_WRAP);
    CHECK(tb_engine_wrap(b, NULL, 0, net, sizeof net, &r) == 0);
    CHECK(r.produced > 0 && r.hs == TB_HS_FINISHED);
    n = r.produced;
    CHECK(tb_engine_unwrap(a, net, n, app, sizeof app, &r) == 0);
    CHECK(r.consumed == n && r.hs == TB_HS_NOT);
    CHECK(tb_exchange(a, b, (const uint8_t *)"new keys", 8, got, sizeof got) == 8 && memcmp(got, "new keys", 8) == 0);
    CHECK(tb_exchange(b, a, (const uint8_t *)"both ways", 9, got, sizeof got) == 9);
  }
  tb_pair_close(&p);
  tb_ctx_free(ctx);
}

int main(void) {
  test_offer_rules();
  test_key_update();
  return tb_test_finish("client cache");
}
