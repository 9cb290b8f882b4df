/* The engine as a JSSE user drives it, scripted by bytes: shared by the
 * fuzz_server/fuzz_client targets and the corpus generator, so a recorded
 * session replays exactly under the fuzzer.
 *
 * Input: one config byte, then ops. Op byte b, kind = b & 7:
 *   0 chunk: 2-byte big-endian length, that many peer bytes (cut at the end
 *     of the input) join the inbound buffer, then pump
 *   1 pump only            2 wrap (b >> 3) * 97 + 1 bytes of application data
 *   3 close_outbound       4 close_inbound
 *   5 begin (client start; key update once established)
 *   6 server: request post-handshake auth (need = b & 8)
 *   7 chunk without pump (records coalesce with the next chunk)
 * Pumps use the buffer-size classes in bits 3-4 (wrap) and 5-6 (unwrap);
 * a call that overflows a small buffer is retried with a full one. */
#ifndef TB_FUZZ_DRIVER_H
#define TB_FUZZ_DRIVER_H
#include "tb.h"
#include "keys.h"

/* config byte */
#define FZ_CFG_VERSION 0x03   /* 0 1.2-1.3, 1 only 1.2, 2 only 1.3, 3 1.2-1.3 CHACHA first */
#define FZ_CFG_REJECT 0x04    /* the trust decision says no */
#define FZ_CFG_CLIENT_AUTH 0x08 /* server asks for a certificate; client offers one */
#define FZ_CFG_HELLO_TASK 0x10 /* server: ClientHello goes to a task (ALPN, SNI) */
#define FZ_CFG_ALPN 0x20      /* ALPN offered / accepted */

enum { FZ_RAND_CTX = 0, FZ_RAND_CLIENT = 1, FZ_RAND_SERVER = 2 };

typedef struct fz_side {
  tb_engine *e;
  SSL_CTX *ctx;
  int client, cfg, failures;
  uint8_t *in;      /* peer bytes not consumed yet (exact-size heap block) */
  size_t in_len;
  uint8_t *out;     /* what the engine wrote, when capture is on */
  size_t out_len, out_cap;
  int capture;
} fz_side;

/* Once per process: deterministic RAND, fixed keys. */
int fz_init(void);
/* Reseeds every RAND stream: call before each input. */
void fz_rand_reset(void);
void fz_rand_restart(int stream); /* one stream back to its seed */
void fz_rand_use(int stream);
int fz_rand_install(void); /* fuzz_rand.c */

int fz_open(fz_side *s, int client, int cfg);
void fz_close(fz_side *s);
void fz_feed(fz_side *s, const uint8_t *p, size_t n);
void fz_pump(fz_side *s, int classes);
void fz_op(fz_side *s, int b, const uint8_t *data, size_t n);
/* What fz_run does before the first op (a client starts its handshake). */
void fz_start(fz_side *s);
/* Runs one whole fuzz input against a fresh engine; 1 when the handshake
 * finished and nothing failed. */
int fz_run(int client, const uint8_t *data, size_t size);
#endif
