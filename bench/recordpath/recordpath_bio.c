/* A BIO that takes OpenSSL's kTLS controls and seals and opens TLS records
 * itself with EVP AES-128-GCM, as a tlsbridge BIO would: the prototype of
 * the kTLS-interface record path measured by bench/recordpath (see
 * recordpath.c and docs/record-path.md). One per side, pointing at its
 * peer; without kTLS keys it moves bytes like a memory BIO. */
#include "recordpath_bio.h"

#include <string.h>
#ifndef OPENSSL_NO_KTLS
#include <linux/tls.h>
#endif

/* ---- one direction of record protection, AES-128-GCM, as a BIO would do it ---- */

void rec_key_init(rec_key *k, const uint8_t key[16], const uint8_t iv[12], uint64_t seq, int tls13, int enc) {
  k->ctx = EVP_CIPHER_CTX_new();
  NEED(k->ctx && EVP_CipherInit_ex(k->ctx, EVP_aes_128_gcm(), NULL, key, NULL, enc) == 1);
  memcpy(k->iv, iv, 12);
  k->seq = seq;
  k->tls13 = tls13;
}

static void put64(uint8_t *p, uint64_t v) {
  int i;
  for (i = 7; i >= 0; i--, v >>= 8)
    p[i] = (uint8_t)v;
}

/* The nonce and AAD of record k->seq whose body (after any explicit nonce)
 * is body bytes long; returns the AAD length. */
static size_t rec_nonce_aad(const rec_key *k, uint8_t type, size_t body, uint8_t nonce[12], uint8_t aad[13]) {
  uint8_t s[8];
  int i;
  put64(s, k->seq);
  memcpy(nonce, k->iv, 12);
  if (k->tls13) {
    for (i = 0; i < 8; i++)
      nonce[4 + i] ^= s[i];
    aad[0] = 23, aad[1] = 3, aad[2] = 3, aad[3] = (uint8_t)(body >> 8), aad[4] = (uint8_t)body;
    return 5;
  }
  memcpy(nonce + 4, s, 8);
  memcpy(aad, s, 8);
  aad[8] = type, aad[9] = 3, aad[10] = 3, aad[11] = (uint8_t)((body - TAG) >> 8), aad[12] = (uint8_t)(body - TAG);
  return 13;
}

/* Seals n plaintext bytes of record type type from in straight into out
 * (header included); returns the record's length. */
size_t rec_seal(rec_key *k, uint8_t type, const uint8_t *in, size_t n, uint8_t *out) {
  uint8_t nonce[12], aad[13];
  size_t body = k->tls13 ? n + 1 + TAG : 8 + n + TAG, al = rec_nonce_aad(k, type, k->tls13 ? body : n + TAG, nonce, aad);
  uint8_t *p = out + 5 + (k->tls13 ? 0 : 8);
  int l;
  out[0] = k->tls13 ? 23 : type, out[1] = 3, out[2] = 3, out[3] = (uint8_t)(body >> 8), out[4] = (uint8_t)body;
  if (!k->tls13)
    memcpy(out + 5, nonce + 4, 8);
  NEED(EVP_EncryptInit_ex(k->ctx, NULL, NULL, NULL, nonce) == 1);
  NEED(EVP_EncryptUpdate(k->ctx, NULL, &l, aad, (int)al) == 1);
  NEED(EVP_EncryptUpdate(k->ctx, p, &l, in, (int)n) == 1);
  if (k->tls13)
    NEED(EVP_EncryptUpdate(k->ctx, p + n, &l, &type, 1) == 1);
  NEED(EVP_EncryptFinal_ex(k->ctx, p, &l) == 1);
  NEED(EVP_CIPHER_CTX_ctrl(k->ctx, EVP_CTRL_AEAD_GET_TAG, TAG, out + 5 + body - TAG) == 1);
  k->seq++;
  return 5 + body;
}

/* Opens the whole record at in (len bytes) into out; returns the plaintext
 * length and its type, or -1 when it does not authenticate. */
long rec_open(rec_key *k, const uint8_t *in, size_t len, uint8_t *out, uint8_t *type) {
  uint8_t nonce[12], aad[13];
  size_t body = len - 5, skip = k->tls13 ? 0 : 8, n = body - skip - TAG;
  int l;
  rec_nonce_aad(k, in[0], k->tls13 ? body : n + TAG, nonce, aad);
  if (!k->tls13)
    memcpy(nonce + 4, in + 5, 8);
  NEED(EVP_DecryptInit_ex(k->ctx, NULL, NULL, NULL, nonce) == 1);
  NEED(EVP_DecryptUpdate(k->ctx, NULL, &l, k->tls13 ? in : aad, k->tls13 ? 5 : 13) == 1);
  NEED(EVP_DecryptUpdate(k->ctx, out, &l, in + 5 + skip, (int)n) == 1);
  NEED(EVP_CIPHER_CTX_ctrl(k->ctx, EVP_CTRL_AEAD_SET_TAG, TAG, (void *)(in + len - TAG)) == 1);
  if (EVP_DecryptFinal_ex(k->ctx, out + n, &l) != 1)
    return -1;
  k->seq++;
  if (!k->tls13) {
    *type = in[0];
    return (long)n;
  }
  while (n > 0 && out[n - 1] == 0)
    n--;
  NEED(n > 0);
  *type = out[--n];
  return (long)n;
}

/* ---- a memory BIO, one per side, pointing at its peer: a write lands in the
 * peer's inbound buffer (the caller's destination), a read consumes this
 * side's. With OpenSSL's kTLS controls accepted it seals and opens records. ---- */

static int kbio_write(BIO *b, const char *data, int len) {
  kbio *k = BIO_get_data(b);
  kbio *p = k->peer;
  uint8_t *dst;
  BIO_clear_retry_flags(b);
  if (k->tx_on && k->refuse > 0) {
    k->refuse--;
    BIO_set_retry_write(b);
    return -1;
  }
  if (p->in_off > 0 && p->in_off == p->in_len)
    p->in_off = p->in_len = 0;
  dst = p->in + p->in_len;
  NEED(p->in_len + (size_t)len + 64 <= RING);
  if (!k->tx_on) {
    memcpy(dst, data, (size_t)len);
    p->in_len += (size_t)len;
    return len;
  }
  NEED(len <= MAXREC);
  p->in_len += rec_seal(&k->tx, k->ctrl_type ? (uint8_t)k->ctrl_type : 23, (const uint8_t *)data, (size_t)len, dst);
  k->ctrl_type = 0;
  return len;
}

/* With kTLS receive on, OpenSSL expects what Linux's ktls_read_record gives:
 * one record per read, a plain header (type, TLS 1.2 version, plaintext
 * length) then the plaintext. */
static int kbio_read(BIO *b, char *out, int outl) {
  kbio *k = BIO_get_data(b);
  size_t avail = k->in_len - k->in_off, rl;
  const uint8_t *r = k->in + k->in_off;
  long n;
  uint8_t type;
  BIO_clear_retry_flags(b);
  if (avail == 0) {
    BIO_set_retry_read(b);
    return -1;
  }
  if (!k->rx_on) {
    if ((size_t)outl > avail)
      outl = (int)avail;
    memcpy(out, r, (size_t)outl);
    k->in_off += (size_t)outl;
    return outl;
  }
  NEED(avail >= 5);
  rl = 5 + ((size_t)r[3] << 8 | r[4]);
  NEED(avail >= rl && (size_t)outl >= rl);
  n = rec_open(&k->rx, r, rl, (uint8_t *)out + 5, &type);
  NEED(n >= 0);
  out[0] = (char)type, out[1] = 3, out[2] = 3, out[3] = (char)(n >> 8), out[4] = (char)n;
  k->in_off += rl;
  return (int)n + 5;
}

#ifndef OPENSSL_NO_KTLS
#define BIO_CTRL_SET_KTLS 72            /* internal/bio.h: not in the public headers */
#define BIO_CTRL_SET_KTLS_TX_SEND_CTRL_MSG 74
#define BIO_CTRL_CLEAR_KTLS_TX_CTRL_MSG 75

/* OpenSSL hands Linux's crypto_info (linux/tls.h) for a kernel socket. */
static long kbio_set_ktls(kbio *k, long tx, void *ptr) {
  const struct tls12_crypto_info_aes_gcm_128 *g = ptr;
  uint8_t iv[12];
  uint64_t seq = 0;
  int i, tls13 = g->info.version == TLS_1_3_VERSION;
  if (g->info.cipher_type != TLS_CIPHER_AES_GCM_128)
    return 0;
  memcpy(iv, g->salt, 4);
  memcpy(iv + 4, g->iv, 8);
  for (i = 0; i < 8; i++)
    seq = seq << 8 | g->rec_seq[i];
  EVP_CIPHER_CTX_free(tx ? k->tx.ctx : k->rx.ctx); /* a KeyUpdate re-keys */
  rec_key_init(tx ? &k->tx : &k->rx, g->key, iv, seq, tls13, tx != 0);
  if (tx)
    k->tx_on = 1;
  else
    k->rx_on = 1;
  return 1;
}
#endif

static long kbio_ctrl(BIO *b, int cmd, long num, void *ptr) {
  kbio *k = BIO_get_data(b);
  switch (cmd) {
  case BIO_CTRL_FLUSH:
    return 1;
  case BIO_CTRL_PENDING:
    return (long)(k->in_len - k->in_off);
  case BIO_CTRL_WPENDING:
    return 0;
#ifndef OPENSSL_NO_KTLS
  case BIO_CTRL_SET_KTLS:
    return k->ktls ? kbio_set_ktls(k, num, ptr) : 0;
  case BIO_CTRL_GET_KTLS_SEND:
    return k->tx_on;
  case BIO_CTRL_GET_KTLS_RECV:
    return k->rx_on;
  case BIO_CTRL_SET_KTLS_TX_SEND_CTRL_MSG:
    k->ctrl_type = (int)num;
    return 1;
  case BIO_CTRL_CLEAR_KTLS_TX_CTRL_MSG:
    k->ctrl_type = 0;
    return 1;
#endif
  default:
    return 0;
  }
}

static BIO_METHOD *kbio_method(void) {
  static BIO_METHOD *m;
  if (!m) {
    m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "recordpath");
    NEED(m && BIO_meth_set_write(m, kbio_write) && BIO_meth_set_read(m, kbio_read) &&
         BIO_meth_set_ctrl(m, kbio_ctrl));
  }
  return m;
}

BIO *kbio_new(kbio *k, kbio *peer, int ktls) {
  BIO *b = BIO_new(kbio_method());
  memset(k, 0, sizeof *k);
  k->peer = peer;
  k->ktls = ktls;
  NEED(b && (k->in = malloc(RING)) != NULL);
  BIO_set_data(b, k);
  BIO_set_init(b, 1);
  return b;
}

void kbio_free(kbio *k) {
  EVP_CIPHER_CTX_free(k->tx.ctx);
  EVP_CIPHER_CTX_free(k->rx.ctx);
  free(k->in);
}
