/* Sealing TLS 1.2 and 1.3 records in the engine's BIO (seal.c): OpenSSL's
 * kTLS interface hands the BIO the sending direction's application traffic
 * keys, and from then on each BIO write is one record's plaintext. */
#ifndef TB_SEAL_H
#define TB_SEAL_H

#include <stddef.h>
#include <stdint.h>
#include <openssl/ssl.h>

typedef struct tb_seal tb_seal;

/* The kTLS controls libssl sends a BIO (OpenSSL's include/internal/bio.h;
 * bio.h keeps the numbers reserved). GET_KTLS_SEND is public. Both BIOs
 * that seal (the engine's and the socket's) answer them. */
#define TB_BIO_CTRL_SET_KTLS 72
#define TB_BIO_CTRL_SET_KTLS_TX_SEND_CTRL_MSG 74
#define TB_BIO_CTRL_CLEAR_KTLS_TX_CTRL_MSG 75
#ifndef BIO_CTRL_GET_KTLS_SEND
#define BIO_CTRL_GET_KTLS_SEND 73
#endif

/* 1 when the OpenSSL this process runs is a release (patch level included)
 * whose kTLS record method the seal tests exercised. */
int tb_seal_supported(void);
/* Has libssl offer the application keys of every connection made from ctx
 * to its BIO (where supported). libssl offers both directions' keys; the
 * receiving ones are declined, an attempt that costs ~10 K instructions per
 * key change. Clearing SSL_OP_ENABLE_KTLS on the context or a connection
 * turns sealing off there. */
void tb_seal_offer(SSL_CTX *ctx);

/* The BIO's answer to BIO_CTRL_SET_KTLS: 1 and *s made or re-keyed when it
 * takes the keys (TLS 1.2 or 1.3, send direction, an AEAD it seals), else
 * 0. A first key declined leaves *s NULL and OpenSSL seals the records
 * itself; a new key for a seal in use that cannot be taken leaves *s failed
 * (tb_seal_failed), as libssl then has no record layer to go back to.
 * crypto_info is OpenSSL's ktls_crypto_info_t. */
int tb_seal_set_key(tb_seal **s, long direction, const void *crypto_info);
/* BIO_CTRL_SET_KTLS_TX_SEND_CTRL_MSG / _CLEAR_: the next record's type. */
void tb_seal_set_type(tb_seal *s, int type);
/* Bytes the record sealing n plaintext bytes takes, header included. */
size_t tb_seal_len(const tb_seal *s, size_t n);
/* Seals n <= 2^14 plaintext bytes as the next record into out (room for
 * tb_seal_len(s, n)); 1, or 0 when the seal has failed, now (EVP failed,
 * the sequence is spent: OpenSSL's error queue says so) or before. */
int tb_seal_record(tb_seal *s, const uint8_t *in, size_t n, uint8_t *out);
/* 1 once a key change or a record failed: a BIO then writes nothing more,
 * not even OpenSSL's alert, and fails every write without reading it. */
int tb_seal_failed(const tb_seal *s);
void tb_seal_free(tb_seal *s);

#ifdef TB_SEAL_FAULTS
/* Tests only (compiled into a test's own copy of seal.c): fail the nth
 * cipher fetch, cipher initialisation (both counted over send keys) or
 * record seal from now; 0 disarms. */
enum { TB_SEAL_FAULT_FETCH = 0, TB_SEAL_FAULT_INIT = 1, TB_SEAL_FAULT_SEAL = 2 };
void tb_seal_fault(int point, long nth);
#endif

#endif
