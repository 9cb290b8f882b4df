/* The record protection and the memory BIO of bench/recordpath: AES-128-GCM
 * records sealed and opened with EVP as a BIO given OpenSSL's kTLS keys
 * would (recordpath_bio.c), shared by the counting regions and the checks
 * in recordpath.c. */
#ifndef RECORDPATH_BIO_H
#define RECORDPATH_BIO_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <openssl/bio.h>
#include <openssl/evp.h>

#define MAXREC 16384
#define TAG 16
#define RING (1 << 21)

#define NEED(c)                                                            \
  do {                                                                     \
    if (!(c)) {                                                            \
      fprintf(stderr, "recordpath: %s:%d: %s\n", __FILE__, __LINE__, #c);  \
      exit(2);                                                             \
    }                                                                      \
  } while (0)

typedef struct rec_key {
  EVP_CIPHER_CTX *ctx;
  uint8_t iv[12]; /* TLS 1.3: the static IV; TLS 1.2: salt, then the explicit part */
  uint64_t seq;
  int tls13;
} rec_key;

typedef struct kbio {
  struct kbio *peer;
  uint8_t *in;
  size_t in_off, in_len;
  int ktls; /* 0 plain; else accepts BIO_CTRL_SET_KTLS */
  int tx_on, rx_on, ctrl_type;
  int refuse; /* writes still to refuse with a retry once sending is sealed */
  rec_key tx, rx;
} kbio;

void rec_key_init(rec_key *k, const uint8_t key[16], const uint8_t iv[12], uint64_t seq, int tls13, int enc);
size_t rec_seal(rec_key *k, uint8_t type, const uint8_t *in, size_t n, uint8_t *out);
long rec_open(rec_key *k, const uint8_t *in, size_t len, uint8_t *out, uint8_t *type);
/* A BIO over k whose writes land in peer's inbound buffer; ktls: it takes
 * OpenSSL's kTLS controls. kbio_free releases what k holds. */
BIO *kbio_new(kbio *k, kbio *peer, int ktls);
void kbio_free(kbio *k);

#endif
