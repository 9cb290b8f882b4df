/* Key limits in the engine: a TLS 1.3 write key protects at most its limit
 * of plaintext, then a KeyUpdate asking for the peer's goes out before the
 * next byte; the peer's request restarts the count; TLS 1.2 has no limit.
 * The receiving side counts the KeyUpdates it read (OpenSSL's message
 * callback) and checks every byte. */
#include <string.h>

#include "test_support.h"

static int key_updates_read;

static void count_key_updates(int write_p, int version, int content_type, const void *buf, size_t len, SSL *ssl,
                              void *arg) {
  (void)version, (void)ssl, (void)arg;
  if (!write_p && content_type == SSL3_RT_HANDSHAKE && len > 0 && ((const uint8_t *)buf)[0] == SSL3_MT_KEY_UPDATE)
    key_updates_read++;
}

/* from wraps msg (one wrap, the window big enough), to unwraps every record;
 * returns the plaintext to got. */
static size_t send_all(tb_engine *from, tb_engine *to, const uint8_t *msg, size_t n, uint8_t *got, size_t cap) {
  static uint8_t net[1 << 17];
  size_t len = 0, pos = 0, out = 0;
  tb_result r;
  int guard;
  for (guard = 0; guard < 64 && (pos < n || from->io.spill_len > 0); guard++) {
    CHECK(tb_engine_wrap(from, msg + pos, n - pos, net + len, sizeof net - len, &r) == 0);
    pos += r.consumed;
    len += r.produced;
  }
  CHECK(pos == n);
  for (pos = 0, guard = 0; pos < len && guard < 1000; guard++) {
    CHECK(tb_engine_unwrap(to, net + pos, len - pos, got + out, cap - out, &r) == 0);
    pos += r.consumed;
    out += r.produced;
  }
  CHECK(pos == len);
  return out;
}

static void run(int tls12) {
  tb_error err;
  SSL_CTX *ctx = tb_ctx_new(&err);
  tb_pair p;
  static uint8_t msg[3500], got[8192];
  size_t i;
  for (i = 0; i < sizeof msg; i++)
    msg[i] = (uint8_t)(i * 7);
  if (tls12)
    SSL_CTX_set_max_proto_version(ctx, TLS1_2_VERSION);
  CHECK(tb_pair_open(&p, ctx, "ec") == 0);
  tb_key_limits(p.client, 1000, 0);
  tb_key_limits(p.server, 1000, 0);
  CHECK(tb_pair_handshake(&p) == 0);
  SSL_set_msg_callback(p.server->ssl, count_key_updates);
  SSL_set_msg_callback(p.client->ssl, count_key_updates);
  key_updates_read = 0;
  CHECK(send_all(p.client, p.server, msg, sizeof msg, got, sizeof got) == sizeof msg);
  CHECK(memcmp(got, msg, sizeof msg) == 0);
  if (tls12) {
    CHECK(key_updates_read == 0 && p.client->key_limit == UINT64_MAX);
  } else {
    /* 1000 + 1000 + 1000 + 500 bytes: three KeyUpdates, the last key has 500 left */
    CHECK(key_updates_read == 3);
    CHECK(p.client->key_left == 500);
    /* the server answers the requests with one update of its own: a new
     * key whose count starts at the limit */
    CHECK(send_all(p.server, p.client, msg, 10, got, sizeof got) == 10);
    CHECK(p.server->key_left == 990);
    /* the server asks: the client's answer is a new key too */
    CHECK(tb_key_update(p.server, 1) == 0);
    CHECK(send_all(p.server, p.client, msg, 10, got, sizeof got) == 10);
    CHECK(send_all(p.client, p.server, msg, 10, got, sizeof got) == 10);
    CHECK(p.client->key_left == 990);
  }
  tb_pair_close(&p);
  tb_ctx_free(ctx);
}

int main(void) {
  run(0);
  run(1);
  return tb_test_finish("key limits");
}
