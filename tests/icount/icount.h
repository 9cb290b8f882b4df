/* What the instruction-count harness's files share (tests/icount/icount.c,
 * icount_socket.c): the fixed suites, the warm-up count, the plaintext
 * buffers, the region brackets (callgrind's collection toggle and dump, or
 * the heap counter in the ICOUNT_HEAP build), the warm-up-then-count loop
 * and the floor's SSL_CTX. */
#ifndef TB_ICOUNT_H
#define TB_ICOUNT_H
#include "keys.h"
#include "tb.h"

#include <stdio.h>
#include <stdlib.h>
#include <openssl/ssl.h>

#define SUITE "TLS_AES_128_GCM_SHA256"
#define SUITE12 "ECDHE-RSA-AES128-GCM-SHA256" /* TLS 1.2's, on the RSA key */
#define WARM 4

#define NEED(c)                                                           \
  do {                                                                    \
    if (!(c)) {                                                           \
      fprintf(stderr, "icount: %s:%d: %s\n", __FILE__, __LINE__, #c);     \
      exit(2);                                                            \
    }                                                                     \
  } while (0)

/* src: what every region sends (filled by main); plain: where it lands */
extern uint8_t src[TB_MAX_PLAINTEXT], plain[TB_MAX_PLAINTEXT];

/* A region counts from region_start to region_end, which dumps it under
 * name ("<side> <operation>[ x<count>]"); region_pause and region_resume
 * leave work in between out of it. */
void region_start(void);
void region_pause(void);
void region_resume(void);
void region_end(const char *name);

/* op's first WARM calls (counted 0) stay outside the region, so one-time
 * costs (buffers, lazy tables) do not land in the count; the next `times`
 * calls (counted 1) are the region called name. With paused, collection is
 * off during those calls except where op itself brackets work with
 * region_resume and region_pause. op re-produces its bytes on every call,
 * so the caller checks them after. */
void count_region(const char *name, void (*op)(void *arg, int counted), void *arg, int times, int paused);

/* Plain OpenSSL's context for one protocol version; with pk, a server's. */
SSL_CTX *ossl_ctx_v(EVP_PKEY *pk, X509 *x, int version);

/* icount_socket.c: the "socket" rows, `exchanges` per region. */
void socket_regions(tb_keymat *key, EVP_PKEY *pk, X509 *x, int exchanges);
#endif
