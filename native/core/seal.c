/* Sealing TLS 1.2 and 1.3 records in the engine's BIO, through OpenSSL's
 * kTLS interface. With SSL_OP_ENABLE_KTLS, libssl offers its BIO the
 * sending direction's application traffic keys (BIO_CTRL_SET_KTLS, and
 * again at every TLS 1.3 KeyUpdate); a BIO that takes them is handed each
 * record's plaintext from the caller's buffer instead of a sealed record, so
 * the engine seals it straight into the caller's destination: one pass over
 * the bytes where OpenSSL's record layer copies the plaintext into its write
 * buffer, seals it there, and the BIO copies the record out
 * (docs/record-path.md).
 *
 * Only sending, only the three AEAD ciphers: receiving stays OpenSSL's, so
 * no byte from the peer is parsed here. Declining is always safe: OpenSSL
 * then keeps its own record layer for that key. */
#include "seal.h"

#include <stddef.h>
#include <string.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>

#include "tb_alloc.h"

#define TAG_LEN 16
#define HEADER_LEN 5
#define NONCE_LEN 12
#define SEQ_LEN 8

struct tb_seal {
  EVP_CIPHER_CTX *ctx;
  uint8_t iv[NONCE_LEN];
  uint64_t seq;
  uint8_t type;     /* the next record's content type: application data unless told */
  uint8_t tls12;    /* TLS 1.2's record: outer type, AAD from the sequence (RFC 5246 6.2.3.3) */
  uint8_t explicit; /* bytes of nonce sent before the ciphertext: 8 for TLS 1.2 GCM (RFC 5288) */
  /* A key change or a record failed: OpenSSL's write method is the kTLS
   * one for good, so whatever it writes next (its fatal alert) would leave
   * unsealed. Nothing is sealed or sent any more; the key is gone. */
  uint8_t failed;
};

#ifdef TB_SEAL_FAULTS
static long fault_at[3], fault_seen[3];

void tb_seal_fault(int point, long nth) {
  fault_seen[point] = 0;
  fault_at[point] = nth;
}

static int fault(int point) {
  return ++fault_seen[point] == fault_at[point];
}
#else
#define fault(point) 0
#endif

/* The seal is spent: the key is cleansed and OpenSSL's error queue says
 * why, for the exception that ends the connection. */
static void fail(tb_seal *s, const char *why) {
  EVP_CIPHER_CTX_free(s->ctx);
  s->ctx = NULL;
  OPENSSL_cleanse(s->iv, sizeof s->iv);
  s->failed = 1;
  ERR_raise_data(ERR_LIB_SSL, ERR_R_INTERNAL_ERROR, "tlsbridge record sealing: %s; nothing more is sent", why);
}

int tb_seal_failed(const tb_seal *s) {
  return s && s->failed;
}

size_t tb_seal_len(const tb_seal *s, size_t n) {
  /* TLS 1.3 hides the content type in a byte after the plaintext */
  return HEADER_LEN + s->explicit + n + (s->tls12 ? 0 : 1) + TAG_LEN;
}

void tb_seal_set_type(tb_seal *s, int type) {
  if (s)
    s->type = type > 0 && type < 256 ? (uint8_t)type : SSL3_RT_APPLICATION_DATA;
}

void tb_seal_free(tb_seal *s) {
  if (!s)
    return;
  EVP_CIPHER_CTX_free(s->ctx);
  OPENSSL_cleanse(s, sizeof *s);
  free(s);
}

void tb_seal_offer(SSL_CTX *ctx) {
  if (tb_seal_supported())
    SSL_CTX_set_options(ctx, SSL_OP_ENABLE_KTLS);
}

int tb_seal_record(tb_seal *s, const uint8_t *in, size_t n, uint8_t *out) {
  uint8_t nonce[NONCE_LEN], aad12[SEQ_LEN + HEADER_LEN];
  const uint8_t *aad = out; /* TLS 1.3: the record header */
  size_t len = tb_seal_len(s, n) - HEADER_LEN, aad_len = HEADER_LEN;
  size_t sealed = s->tls12 ? n : n + 1; /* TLS 1.3 seals the type byte too */
  uint8_t *p = out + HEADER_LEN + s->explicit;
  uint64_t seq = s->seq;
  int i, l, ok;
  if (s->failed)
    return 0;
  if (n > SSL3_RT_MAX_PLAIN_LENGTH || seq == UINT64_MAX) {
    /* RFC 8446 5.5: a sequence number must never wrap */
    fail(s, n > SSL3_RT_MAX_PLAIN_LENGTH ? "record too long" : "sequence number spent");
    return 0;
  }
  /* The nonce is the IV with the sequence number XORed into its end: TLS
   * 1.3's and ChaCha20's rule (RFC 8446 5.3, RFC 7905), and for TLS 1.2 GCM
   * an explicit part that never repeats under the key. */
  memcpy(nonce, s->iv, NONCE_LEN);
  for (i = 0; i < SEQ_LEN; i++)
    nonce[NONCE_LEN - 1 - i] ^= (uint8_t)(seq >> (8 * i));
  out[0] = s->tls12 ? s->type : SSL3_RT_APPLICATION_DATA, out[1] = 3, out[2] = 3;
  out[3] = (uint8_t)(len >> 8), out[4] = (uint8_t)len;
  if (s->tls12) { /* sequence, type, version, plaintext length */
    memcpy(out + HEADER_LEN, nonce + NONCE_LEN - s->explicit, s->explicit);
    for (i = 0; i < SEQ_LEN; i++)
      aad12[SEQ_LEN - 1 - i] = (uint8_t)(seq >> (8 * i));
    memcpy(aad12 + SEQ_LEN, out, 3);
    aad12[SEQ_LEN + 3] = (uint8_t)(n >> 8), aad12[SEQ_LEN + 4] = (uint8_t)n;
    aad = aad12, aad_len += SEQ_LEN;
  }
  ok = EVP_EncryptInit_ex(s->ctx, NULL, NULL, NULL, nonce) == 1 &&
       EVP_EncryptUpdate(s->ctx, NULL, &l, aad, (int)aad_len) == 1 &&
       (n == 0 || EVP_EncryptUpdate(s->ctx, p, &l, in, (int)n) == 1) &&
       (s->tls12 || EVP_EncryptUpdate(s->ctx, p + n, &l, &s->type, 1) == 1) &&
       EVP_EncryptFinal_ex(s->ctx, p + sealed, &l) == 1 &&
       EVP_CIPHER_CTX_ctrl(s->ctx, EVP_CTRL_AEAD_GET_TAG, TAG_LEN, p + sealed) == 1 &&
       !fault(TB_SEAL_FAULT_SEAL);
  OPENSSL_cleanse(nonce, sizeof nonce);
  if (!ok) {
    fail(s, "the cipher failed to seal a record");
    return 0;
  }
  s->seq++;
  s->type = SSL3_RT_APPLICATION_DATA;
  return 1;
}

#if defined(__linux__)
#include <linux/tls.h>

/* OpenSSL's ktls_crypto_info_t on Linux (its include/internal/ktls.h, not
 * installed): the kernel's crypto_info for the suite in a union, then its
 * length. The union holds the suites OpenSSL's build knew from its kernel
 * headers: AES-128-GCM alone before Linux 5.1 (SMALL), else also
 * AES-256-GCM, whose struct is the largest (FULL; CCM and ChaCha20 are no
 * larger and came later). */
struct ossl_ktls_small {
  struct tls12_crypto_info_aes_gcm_128 u;
  size_t len;
};
struct ossl_ktls_full {
  union {
    struct tls12_crypto_info_aes_gcm_128 gcm128;
    struct tls12_crypto_info_aes_gcm_256 gcm256;
    struct tls12_crypto_info_aes_ccm_128 ccm128;
    struct tls12_crypto_info_chacha20_poly1305 chacha;
  } u;
  size_t len;
};
#define SMALL_LEN offsetof(struct ossl_ktls_small, len)
#define FULL_LEN offsetof(struct ossl_ktls_full, len)
_Static_assert(sizeof(((struct ossl_ktls_full *)0)->u) == sizeof(struct tls12_crypto_info_aes_gcm_256),
               "AES-256-GCM's struct is the union's largest");

/* The releases whose kTLS record method the seal tests exercised, patch
 * level included: each re-keys the BIO at every TLS 1.3 KeyUpdate, writes
 * its fatal alert through the failed method (which the BIO then refuses),
 * and retries a write the BIO failed (3.5.5 from the buffer it first
 * passed, which the BIO never reads again). Any other release, 3.0 among
 * them (it re-keys only its own record layer), seals its own records. */
static const unsigned long CHECKED[] = {
    0x30500050UL, /* 3.5.5 */
    0x40000030UL, /* 4.0.3 */
};

int tb_seal_supported(void) {
  unsigned long v = OpenSSL_version_num();
  size_t i;
  for (i = 0; i < sizeof CHECKED / sizeof CHECKED[0]; i++)
    if (v == CHECKED[i])
      return 1;
  return 0;
}

/* Where each suite's fields sit in the kernel's crypto_info for it. */
#define LAYOUT(cipher_type, evp_name, explicit, st)                                          \
  {cipher_type, evp_name, explicit, sizeof(st), offsetof(st, key), sizeof(((st *)0)->key),   \
   offsetof(st, salt), sizeof(((st *)0)->salt), offsetof(st, iv), sizeof(((st *)0)->iv),     \
   offsetof(st, rec_seq)}

static const struct layout {
  unsigned type;
  const char *name;
  size_t explicit; /* in TLS 1.2 */
  size_t size, key, key_len, salt, salt_len, iv, iv_len, rec_seq;
} LAYOUTS[] = {
    LAYOUT(TLS_CIPHER_AES_GCM_128, "AES-128-GCM", 8, struct tls12_crypto_info_aes_gcm_128),
    LAYOUT(TLS_CIPHER_AES_GCM_256, "AES-256-GCM", 8, struct tls12_crypto_info_aes_gcm_256),
    LAYOUT(TLS_CIPHER_CHACHA20_POLY1305, "ChaCha20-Poly1305", 0, struct tls12_crypto_info_chacha20_poly1305),
};

static size_t read_size(const uint8_t *p) {
  size_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

/* 1 when the object OpenSSL passed has the layout this was written for,
 * reading only bytes inside it. Its first bytes are the suite's own struct
 * (OpenSSL fills only suites its build has). Any suite but AES-128-GCM
 * means the FULL union. For AES-128-GCM, the word after its struct is the
 * length in a SMALL union, or the start of the FULL union's rest, which
 * OpenSSL zeroes (memset of the whole object), before the length. */
static int layout_ok(const uint8_t *base, const struct layout *l, int tls13) {
  size_t at = FULL_LEN;
  if (l->salt_len + l->iv_len != NONCE_LEN)
    return 0;
  if (l->type == TLS_CIPHER_AES_GCM_128 && !tls13) { /* TLS 1.3 came with 5.1's headers */
    size_t w = read_size(base + SMALL_LEN);
    if (w == l->size)
      return 1;
    if (w != 0)
      return 0;
  }
  return read_size(base + at) == l->size;
}

int tb_seal_set_key(tb_seal **out, long direction, const void *crypto_info) {
  const struct tls12_crypto_info_aes_gcm_128 *k = crypto_info;
  const struct layout *l = NULL;
  const uint8_t *base = crypto_info, *rec_seq;
  EVP_CIPHER *cipher = NULL;
  tb_seal *s = *out;
  uint64_t seq = 0;
  size_t i;
  int version = k ? k->info.version : 0, rekey = s != NULL;
  if (direction != 1)
    return 0; /* receiving stays OpenSSL's */
  if (s && s->failed)
    return 0;
  for (i = 0; i < sizeof LAYOUTS / sizeof LAYOUTS[0] && k && !l; i++)
    if (LAYOUTS[i].type == k->info.cipher_type)
      l = &LAYOUTS[i];
  /* AES-128-CCM, or not the layout this was written for: OpenSSL seals. A
   * new key for a seal already in use must be taken: libssl has no other
   * record layer to go back to then. */
  if (!l || (version != TLS_1_2_VERSION && version != TLS_1_3_VERSION) ||
      !layout_ok(base, l, version == TLS_1_3_VERSION)) {
    if (rekey)
      fail(s, "the new key is not one it seals");
    return 0;
  }
  rec_seq = base + l->rec_seq;
  for (i = 0; i < 8; i++)
    seq = seq << 8 | rec_seq[i];
  /* The first key's failures are declined quietly: OpenSSL then seals with
   * its own record layer, and its queue must not keep ours. */
  if (!rekey)
    ERR_set_mark();
  if (!s && !(s = tb_calloc(1, sizeof *s)))
    goto fail;
  if (!s->ctx && !(s->ctx = EVP_CIPHER_CTX_new()))
    goto fail;
  if (!fault(TB_SEAL_FAULT_FETCH))
    cipher = EVP_CIPHER_fetch(NULL, l->name, NULL);
  if (!cipher || (size_t)EVP_CIPHER_get_key_length(cipher) != l->key_len) {
    EVP_CIPHER_free(cipher);
    if (rekey)
      fail(s, "cannot fetch the cipher for the new key");
    goto fail;
  }
  if (fault(TB_SEAL_FAULT_INIT) || EVP_EncryptInit_ex(s->ctx, cipher, NULL, base + l->key, NULL) != 1) {
    EVP_CIPHER_free(cipher);
    if (rekey)
      fail(s, "cannot initialise the cipher with the new key");
    goto fail;
  }
  EVP_CIPHER_free(cipher); /* the context holds its own reference */
  if (!rekey)
    ERR_pop_to_mark();
  memcpy(s->iv, base + l->salt, l->salt_len);
  memcpy(s->iv + l->salt_len, base + l->iv, l->iv_len);
  s->seq = seq;
  s->type = SSL3_RT_APPLICATION_DATA;
  s->tls12 = version == TLS_1_2_VERSION;
  s->explicit = s->tls12 ? (uint8_t)l->explicit : 0;
  *out = s;
  return 1;
fail:
  if (rekey) {
    /* libssl fails the connection ("no suitable record layer") and writes
     * its alert through this BIO: the failed seal refuses it, and every
     * write after it. */
    if (!s->failed)
      fail(s, "cannot take the new key");
    return 0;
  }
  ERR_pop_to_mark();
  tb_seal_free(s);
  *out = NULL;
  return 0;
}

#else

int tb_seal_supported(void) {
  return 0;
}

int tb_seal_set_key(tb_seal **out, long direction, const void *crypto_info) {
  (void)out, (void)direction, (void)crypto_info;
  return 0;
}

#endif
