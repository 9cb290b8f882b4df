#ifndef TB_TEST_SUPPORT_H
#define TB_TEST_SUPPORT_H
#include "tb.h"
#include "keys.h"
#include "socket.h"

#include <stdio.h>
#include <stdlib.h>

extern int tb_test_failures;
#define CHECK(cond)                                                                   \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);       \
      tb_test_failures++;                                                             \
    }                                                                                 \
  } while (0)

/* A test program's ending: "<what> tests passed" and 0, or how many checks
 * failed and 1 (ctest reads the exit status). */
int tb_test_finish(const char *what);

/* A self-signed certificate and key for "localhost" ("rsa" or "ec"). */
tb_keymat *tb_test_keymat(const char *kind);
/* The same as DER (PKCS#8 key, certificate); OPENSSL_free both. */
int tb_test_key_der(const char *kind, unsigned char **kder, int *klen, unsigned char **cder, int *clen);

typedef struct tb_pair {
  tb_engine *client, *server;
  tb_keymat *key;
  uint8_t c2s[1 << 16], s2c[1 << 16];
  size_t c2s_len, s2c_len;
} tb_pair;

int tb_pair_open(tb_pair *p, SSL_CTX *ctx, const char *kind);
/* Runs both sides until neither makes progress; returns 0 when both finished. */
int tb_pair_handshake(tb_pair *p);
void tb_pair_close(tb_pair *p);
/* Answer a pending delegated task the way the Java side would. */
void tb_test_run_task(tb_engine *e, tb_keymat *key);
/* Moves n bytes of msg and whatever else `from` has to say to `to`, wrapping
 * `to`'s answers back; returns the plaintext bytes `to` got. */
size_t tb_exchange(tb_engine *from, tb_engine *to, const uint8_t *msg, size_t n, uint8_t *got, size_t cap);
/* Socket calls as the socket tests make them, on a plain buffer: each
 * checks that it left this thread's OpenSSL error queue empty, failures
 * included (the bundled flavour's record path counts on it). */
long tb_test_rd(tb_sock *s, void *buf, size_t n, int64_t timeout_ms, tb_error *err);
long tb_test_wr(tb_sock *s, const void *buf, size_t n, tb_error *err);
/* The handshake, its tasks answered with key (NULL for a client); 0, or -1
 * with the error printed. */
int tb_test_sock_handshake(tb_sock *s, tb_keymat *key);
/* 127.0.0.1:port in *a. */
void tb_test_loopback(tb_addr *a, int port);
/* A listening socket on 127.0.0.1, on a port the kernel picked; *a is its
 * address. */
tb_sock *tb_test_listener(tb_addr *a);
#endif
