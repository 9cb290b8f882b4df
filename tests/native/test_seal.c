/* The engine's BIO sealing TLS 1.2 and 1.3 records itself (native/core/seal.c),
 * checked where it matters: the receiving engine opens every record with
 * OpenSSL's own record layer (the BIO never opens one), so each byte that
 * arrives intact was sealed right. Runs against the flavour it is linked
 * with: where OpenSSL is not one the BIO takes keys from (3.0), it checks
 * that nothing was handed over. */
#include "test_support.h"
#include "ciphers.h"
#include "seal.h"

#include <string.h>

static uint8_t buf[1 << 18], wire[1 << 19], back[1 << 18];

/* Both ways, n bytes each, through tb_exchange (KeyUpdate answers too). */
static void both_ways(tb_pair *p, size_t n, int salt) {
  size_t i;
  for (i = 0; i < n; i++)
    buf[i] = (uint8_t)(i * 131 + (size_t)salt);
  CHECK(tb_exchange(p->client, p->server, buf, n, back, sizeof back) == n);
  CHECK(memcmp(buf, back, n) == 0);
  CHECK(tb_exchange(p->server, p->client, buf, n, back, sizeof back) == n);
  CHECK(memcmp(buf, back, n) == 0);
}

/* close_notify from the sealing side: an alert record, sealed with its
 * type, that the peer opens and acts on. */
static void close_from(tb_engine *from, tb_engine *to) {
  tb_result r;
  tb_engine_close_outbound(from);
  CHECK(tb_engine_wrap(from, NULL, 0, wire, sizeof wire, &r) == 0);
  CHECK(r.status == TB_CLOSED && r.produced > 0);
  CHECK(tb_engine_unwrap(to, wire, r.produced, back, sizeof back, &r) == 0);
  CHECK(r.status == TB_CLOSED && (to->flags & TB_F_IN_DONE));
}

/* sealed: whether the BIO takes this suite's keys where it seals at all */
static void suite(const char *name, int version, int sealed) {
  static const size_t sizes[] = {1, 1024, 16383, 16384, 16385, 100000};
  tb_error err;
  SSL_CTX *ctx = tb_ctx_new(&err);
  tb_pair p;
  size_t i;
  int sealing;
  CHECK(ctx != NULL);
  CHECK(tb_pair_open(&p, ctx, "ec") == 0);
  for (i = 0; i < 2; i++) /* both sides: a server's defaults leave CBC out */
    CHECK(tb_configure((i ? p.server : p.client)->ssl, version == TLS1_2_VERSION ? name : NULL,
                       version == TLS1_3_VERSION ? name : NULL, version, version, &err) == 0);
  CHECK(tb_pair_handshake(&p) == 0);
  CHECK(strcmp(SSL_CIPHER_get_name(SSL_get_current_cipher(p.server->ssl)), name) == 0);
  sealing = sealed && tb_seal_supported();
  CHECK((p.client->io.seal != NULL) == sealing && (p.server->io.seal != NULL) == sealing);
  for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
    both_ways(&p, sizes[i], (int)i);
  if (version == TLS1_3_VERSION) {
    /* KeyUpdates from each side, one asking for an answer: libssl re-keys
     * the BIO each time, and the records after them still open. */
    CHECK(SSL_key_update(p.client->ssl, SSL_KEY_UPDATE_REQUESTED) == 1);
    both_ways(&p, 4096, 7);
    CHECK(SSL_key_update(p.server->ssl, SSL_KEY_UPDATE_NOT_REQUESTED) == 1);
    both_ways(&p, 4096, 8);
    CHECK((p.client->io.seal != NULL) == sealing && (p.server->io.seal != NULL) == sealing);
    /* a handshake record after the handshake (a ticket), then data */
    CHECK(SSL_new_session_ticket(p.server->ssl) == 1);
    CHECK(tb_exchange(p.server, p.client, buf, 10, back, sizeof back) == 10);
    CHECK(memcmp(buf, back, 10) == 0);
    CHECK(SSL_SESSION_is_resumable(SSL_get0_session(p.client->ssl)));
  }
  close_from(version == TLS1_3_VERSION ? p.client : p.server, version == TLS1_3_VERSION ? p.server : p.client);
  tb_pair_close(&p);
  tb_ctx_free(ctx);
}

/* A wrap whose source and destination share memory (one array, the way a
 * caller may slice a heap buffer): the record is sealed into the queue, not
 * over plaintext it has not read yet, and arrives intact. */
static void overlapping_buffers(void) {
  tb_error err;
  SSL_CTX *ctx = tb_ctx_new(&err);
  tb_pair p;
  tb_result r;
  size_t i, n = 3000, got = 0, off = 0, wlen = 0;
  CHECK(tb_pair_open(&p, ctx, "ec") == 0);
  CHECK(tb_pair_handshake(&p) == 0);
  for (i = 0; i < n; i++)
    wire[64 + i] = (uint8_t)(i * 7 + 1);
  memcpy(buf, wire + 64, n);
  /* destination starts 64 bytes before the plaintext and runs over it */
  CHECK(tb_engine_wrap(p.client, wire + 64, n, wire, 64 + n + 64, &r) == 0);
  CHECK(r.status == TB_OK && r.consumed == n);
  wlen = r.produced;
  while (p.client->io.spill_len > 0) {
    CHECK(tb_engine_wrap(p.client, NULL, 0, wire + wlen, sizeof wire - wlen, &r) == 0);
    if (r.produced == 0)
      break;
    wlen += r.produced;
  }
  while (off < wlen) {
    CHECK(tb_engine_unwrap(p.server, wire + off, wlen - off, back + got, sizeof back - got, &r) == 0);
    CHECK(r.status == TB_OK);
    if (r.consumed == 0)
      break;
    off += r.consumed;
    got += r.produced;
  }
  CHECK(got == n && memcmp(back, buf, n) == 0);
  tb_pair_close(&p);
  tb_ctx_free(ctx);
}

/* A context without SSL_OP_ENABLE_KTLS (what -Dtlsbridge.seal=false
 * leaves): libssl keeps sealing, the BIO is handed nothing. */
static void switched_off(void) {
  tb_error err;
  SSL_CTX *ctx = tb_ctx_new(&err);
  tb_pair p;
  CHECK(ctx != NULL);
  CHECK(!!(SSL_CTX_get_options(ctx) & SSL_OP_ENABLE_KTLS) == tb_seal_supported());
  SSL_CTX_clear_options(ctx, SSL_OP_ENABLE_KTLS);
  CHECK(tb_pair_open(&p, ctx, "ec") == 0);
  CHECK(tb_pair_handshake(&p) == 0);
  CHECK(p.client->io.seal == NULL && p.server->io.seal == NULL);
  both_ways(&p, 5000, 9);
  tb_pair_close(&p);
  tb_ctx_free(ctx);
}

#if defined(__linux__)
#include <linux/tls.h>
#include <sys/mman.h>
#include <unistd.h>

/* OpenSSL's key object as its build lays it out: AES-128-GCM alone in the
 * union (kernel headers before 5.1: 48 bytes) or the full union (64),
 * placed so that it ends where an unreadable page starts: a read past the
 * object faults. */
static void key_layouts(void) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE), small = sizeof(struct tls12_crypto_info_aes_gcm_128) + 8,
         full = sizeof(struct tls12_crypto_info_aes_gcm_256) + 8;
  uint8_t *map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *o;
  struct tls12_crypto_info_aes_gcm_128 g;
  tb_seal *s = NULL;
  size_t len;
  CHECK(map != MAP_FAILED && mprotect(map + page, page, PROT_NONE) == 0);
  memset(&g, 0, sizeof g);
  g.info.version = TLS_1_2_VERSION;
  g.info.cipher_type = TLS_CIPHER_AES_GCM_128;
  len = sizeof g;
  /* small: the length right after the suite's struct */
  o = map + page - small;
  memset(o, 0, small);
  memcpy(o, &g, sizeof g);
  memcpy(o + sizeof g, &len, sizeof len);
  CHECK(tb_seal_set_key(&s, 1, o) == 1 && s != NULL);
  tb_seal_free(s), s = NULL;
  /* full: the rest of the union zeroed, then the length */
  o = map + page - full;
  memset(o, 0, full);
  memcpy(o, &g, sizeof g);
  memcpy(o + full - 8, &len, sizeof len);
  CHECK(tb_seal_set_key(&s, 1, o) == 1 && s != NULL);
  tb_seal_free(s), s = NULL;
  /* a length that is neither: not the layout this was written for */
  len = 1;
  memcpy(o + full - 8, &len, sizeof len);
  CHECK(tb_seal_set_key(&s, 1, o) == 0 && s == NULL);
  munmap(map, 2 * page);
}
#else
static void key_layouts(void) {}
#endif

int main(void) {
  printf("%s: the BIO %s\n", OpenSSL_version(OPENSSL_VERSION),
         tb_seal_supported() ? "seals the records it sends" : "leaves sealing to OpenSSL");
  suite("TLS_AES_128_GCM_SHA256", TLS1_3_VERSION, 1);
  suite("TLS_AES_256_GCM_SHA384", TLS1_3_VERSION, 1);
  suite("TLS_CHACHA20_POLY1305_SHA256", TLS1_3_VERSION, 1);
  suite("ECDHE-ECDSA-AES128-GCM-SHA256", TLS1_2_VERSION, 1);
  suite("ECDHE-ECDSA-AES256-GCM-SHA384", TLS1_2_VERSION, 1);
  suite("ECDHE-ECDSA-CHACHA20-POLY1305", TLS1_2_VERSION, 1);
  /* CBC has no kTLS form on Linux: OpenSSL seals, as before */
  suite("ECDHE-ECDSA-AES128-SHA256", TLS1_2_VERSION, 0);
  overlapping_buffers();
  switched_off();
  key_layouts();
  return tb_test_finish("seal");
}
