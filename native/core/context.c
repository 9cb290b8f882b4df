/* SSL_CTX creation. Everything per-connection lives on the SSL; the context
 * is configured once, before any engine exists, and then only read. */
#include "tb.h"
#include "live.h"
#include "seal.h"
#include "session_cache.h"
#include "ticket_keys.h"

#include <pthread.h>
#include <time.h>
#include <openssl/err.h>

static int engine_index = -1;
static pthread_once_t index_once = PTHREAD_ONCE_INIT;

static void make_index(void) {
  engine_index = SSL_get_ex_new_index(0, "tlsbridge engine", NULL, NULL, NULL);
}

int tb_engine_ex_index(void) {
  pthread_once(&index_once, make_index);
  return engine_index;
}

uint64_t tb_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Secure defaults: forward secrecy and AEAD only; CBC and static-RSA suites
 * must be enabled by name. */
static const char DEFAULT_CIPHERS_12[] =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";
static const char DEFAULT_CIPHERS_13[] =
    "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256";
static const unsigned char SID_CTX[] = "tlsbridge";

SSL_CTX *tb_ctx_new(tb_error *err) {
  SSL_CTX *ctx;
  if (tb_engine_ex_index() < 0 || !tb_bio_init() || !tb_live_init()) {
    tb_err_set(err, TB_ERR_MEMORY, "cannot initialise tlsbridge's OpenSSL hooks");
    return NULL;
  }
  ERR_clear_error();
  ctx = SSL_CTX_new(TLS_method());
  if (!ctx) {
    tb_err_from_openssl(err, TB_ERR_SSL, "SSL_CTX_new failed");
    return NULL;
  }
  if (!SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) ||
      !SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION) ||
      !SSL_CTX_set_cipher_list(ctx, DEFAULT_CIPHERS_12) ||
      !SSL_CTX_set_ciphersuites(ctx, DEFAULT_CIPHERS_13) ||
      !SSL_CTX_set_session_id_context(ctx, SID_CTX, sizeof SID_CTX - 1)) {
    tb_err_from_openssl(err, TB_ERR_SSL, "cannot configure SSL_CTX");
    SSL_CTX_free(ctx);
    return NULL;
  }
  /* Renegotiation is refused both ways; compression is off (CRIME). Moving
   * write buffers are allowed because a Java array may be re-pinned at a new
   * address between a retried SSL_write and its repeat. */
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
  /* Spelled out although OpenSSL 3.0 has them off: no client-initiated
   * renegotiation, no renegotiation without RFC 5746, and a client that
   * refuses servers that do not send the renegotiation_info extension. */
  SSL_CTX_clear_options(ctx, SSL_OP_ALLOW_CLIENT_RENEGOTIATION | SSL_OP_ALLOW_UNSAFE_LEGACY_RENEGOTIATION |
                                 SSL_OP_LEGACY_SERVER_CONNECT);
  /* At least 112-bit security (RSA and DH of 2048 bits, ECC of 224, no
   * SHA-1 signatures): Debian's OpenSSL starts at level 2, others at 1. A
   * system configured higher keeps its level. */
  if (SSL_CTX_get_security_level(ctx) < 2)
    SSL_CTX_set_security_level(ctx, 2);
  /* DHE suites are off by default; a user who enables one by name gets
   * RFC 7919 groups sized to the certificate instead of a silent skip. */
  SSL_CTX_set_dh_auto(ctx, 1);
  /* A peer's certificate chain may be at most this long (OpenSSL's default,
   * set here so the bound is ours and documented in docs/security.md). */
  SSL_CTX_set_max_cert_list(ctx, TB_MAX_CERT_LIST);
  SSL_CTX_set_mode(ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_ENABLE_PARTIAL_WRITE);
  /* Engines seal the records they send where this OpenSSL allows (seal.c);
   * -Dtlsbridge.seal=false clears it again at configuration. */
  tb_seal_offer(ctx);
  SSL_CTX_clear_mode(ctx, SSL_MODE_AUTO_RETRY);
  tb_install_callbacks(ctx);
  if (tb_sessions_install(ctx) != 0 || tb_ticket_keys_install(ctx) != 0) {
    tb_err_set(err, TB_ERR_MEMORY, "cannot create the session caches");
    SSL_CTX_free(ctx);
    return NULL;
  }
  return ctx;
}

int tb_ctx_share(SSL_CTX *ctx, SSL_CTX *prev) {
  return tb_sessions_share(ctx, prev) == 0 && tb_ticket_keys_share(ctx, prev) == 0 ? 0 : -1;
}

void tb_ctx_free(SSL_CTX *ctx) {
  /* Engines hold their own references (SSL_new takes one), so the context
   * outlives every connection made from it. */
  SSL_CTX_free(ctx);
}
