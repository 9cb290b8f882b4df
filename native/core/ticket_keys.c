/* The keys that seal session tickets (TLS 1.2 tickets and TLS 1.3 stateless
 * PSKs alike), so servers of a fleet can resume each other's sessions.
 *
 * Every SSL_CTX seals tickets through this file's callback: it starts with a
 * random key (what OpenSSL would do on its own), and a key file can replace
 * it at any time without writing the live SSL_CTX. The keys are swapped
 * under a lock that handshakes take shared; replaced keys are wiped.
 *
 * A key file is nginx's: one 48-byte key (16 name, 16 AES-128, 16 HMAC), or
 * one or more 80-byte keys back to back (16 name, 32 HMAC, 32 AES-256), the
 * first sealing new tickets and every one opening them. HMAC is SHA-256 and
 * the cipher CBC, as in nginx, so both read each other's tickets. Error
 * messages name the file and its size, never a byte of a key. */
#include "ticket_keys.h"
#include "ctx_shared.h"
#include "tb_alloc.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#define NAME_LEN 16
#define SHORT_REC 48
#define LONG_REC 80

typedef struct tkey {
  unsigned char name[NAME_LEN], hmac[32], aes[32];
  int wide; /* 80-byte record: AES-256 and a 32-byte HMAC key; else 16 and 16 */
} tkey;

typedef struct keyset {
  size_t n;
  tkey k[];
} keyset;

struct tb_ticket_keys {
  tb_shared base;
  pthread_rwlock_t rw; /* set */
  keyset *set;
  pthread_mutex_t mu; /* path and seen: one load at a time */
  char *path;         /* NULL while the keys are random */
  struct stat seen;
};
typedef struct tb_ticket_keys tb_ticket_keys;

static tb_ctx_slot keys_slot = TB_CTX_SLOT("tlsbridge ticket keys");

static void set_free(keyset *s) {
  if (s) {
    OPENSSL_cleanse(s, sizeof *s + s->n * sizeof s->k[0]);
    free(s);
  }
}

static keyset *set_new(size_t n) {
  keyset *s = tb_calloc(1, sizeof *s + n * sizeof s->k[0]);
  if (s)
    s->n = n;
  return s;
}

static void keys_destroy(tb_shared *b) {
  tb_ticket_keys *t = (tb_ticket_keys *)b;
  set_free(t->set);
  free(t->path);
  pthread_rwlock_destroy(&t->rw);
  pthread_mutex_destroy(&t->mu);
  free(t);
}

static tb_ticket_keys *keys_of(SSL_CTX *ctx) {
  return (tb_ticket_keys *)tb_ctx_slot_get(ctx, &keys_slot);
}

static int zero(const unsigned char *p, size_t n) {
  unsigned char acc = 0;
  while (n--)
    acc |= *p++;
  return acc == 0;
}

/* Records to keys; a key of all zero bytes (a file truncated and padded) or
 * a name used twice is refused. */
static keyset *parse(const unsigned char *buf, size_t len, tb_error *err, const char *path) {
  size_t rec = len == SHORT_REC ? SHORT_REC : LONG_REC, i, j;
  keyset *s;
  if (len == 0 || len % rec != 0 || len / rec > TB_TICKET_KEYS_MAX) {
    tb_err_set(err, TB_ERR_SSL,
               "session ticket key file %s is %zu bytes: it must hold one 48-byte key or 1 to %d 80-byte keys", path,
               len, TB_TICKET_KEYS_MAX);
    return NULL;
  }
  if (!(s = set_new(len / rec))) {
    tb_err_set(err, TB_ERR_MEMORY, "out of memory reading session ticket keys");
    return NULL;
  }
  for (i = 0; i < s->n; i++) {
    const unsigned char *r = buf + i * rec;
    tkey *k = &s->k[i];
    memcpy(k->name, r, NAME_LEN);
    k->wide = rec == LONG_REC;
    if (k->wide) {
      memcpy(k->hmac, r + 16, 32);
      memcpy(k->aes, r + 48, 32);
    } else {
      memcpy(k->aes, r + 16, 16);
      memcpy(k->hmac, r + 32, 16);
    }
    if (zero(r + NAME_LEN, rec - NAME_LEN)) {
      tb_err_set(err, TB_ERR_SSL, "session ticket key file %s: key %zu is all zero bytes", path, i + 1);
      set_free(s);
      return NULL;
    }
    for (j = 0; j < i; j++) {
      if (memcmp(s->k[j].name, k->name, NAME_LEN) == 0) {
        tb_err_set(err, TB_ERR_SSL, "session ticket key file %s: keys %zu and %zu have the same name", path, j + 1,
                   i + 1);
        set_free(s);
        return NULL;
      }
    }
  }
  return s;
}

/* The file as keys, and its identity for the next change check. Only a
 * regular file that not every user can read is taken; opened non-blocking
 * so a FIFO put there is refused instead of hanging the caller. */
static keyset *read_file(const char *path, struct stat *st, tb_error *err) {
  unsigned char buf[LONG_REC * TB_TICKET_KEYS_MAX + 1];
  size_t got = 0;
  ssize_t n;
  keyset *s = NULL;
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    tb_err_set(err, TB_ERR_SSL, "cannot open session ticket key file %s: %s", path, strerror(errno));
    return NULL;
  }
  if (fstat(fd, st) != 0) {
    tb_err_set(err, TB_ERR_SSL, "cannot stat session ticket key file %s: %s", path, strerror(errno));
  } else if (!S_ISREG(st->st_mode)) {
    tb_err_set(err, TB_ERR_SSL, "session ticket key file %s is not a regular file", path);
  } else if (st->st_mode & S_IROTH) {
    tb_err_set(err, TB_ERR_SSL, "session ticket key file %s is readable by every user (mode %03o): chmod o-rwx it",
               path, (unsigned)(st->st_mode & 0777));
  } else {
    while (got < sizeof buf && ((n = read(fd, buf + got, sizeof buf - got)) > 0 || (n < 0 && errno == EINTR)))
      got += n > 0 ? (size_t)n : 0;
    if (n < 0)
      tb_err_set(err, TB_ERR_SSL, "cannot read session ticket key file %s: %s", path, strerror(errno));
    else if (got != (size_t)st->st_size)
      tb_err_set(err, TB_ERR_SSL, "session ticket key file %s changed while it was read", path);
    else
      s = parse(buf, got, err, path);
  }
  OPENSSL_cleanse(buf, sizeof buf);
  close(fd);
  return s;
}

static void swap_in(tb_ticket_keys *t, keyset *s) {
  keyset *old;
  pthread_rwlock_wrlock(&t->rw);
  old = t->set;
  t->set = s;
  pthread_rwlock_unlock(&t->rw);
  set_free(old);
}

static int same_file(const struct stat *a, const struct stat *b) {
  return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
         a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
         a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

static int key_init(const tkey *k, unsigned char *iv, EVP_CIPHER_CTX *c, EVP_MAC_CTX *h, int enc) {
  char digest[] = "SHA256";
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0), OSSL_PARAM_construct_end()};
  const EVP_CIPHER *cipher = k->wide ? EVP_aes_256_cbc() : EVP_aes_128_cbc();
  if (enc && RAND_bytes(iv, EVP_CIPHER_get_iv_length(cipher)) != 1)
    return 0;
  return EVP_CipherInit_ex(c, cipher, NULL, k->aes, iv, enc) == 1 &&
         EVP_MAC_init(h, k->hmac, k->wide ? 32 : 16, params) == 1;
}

/* OpenSSL's contract: sealing returns 1 (or -1 on error); opening returns 0
 * for an unknown name (full handshake), 1, or 2 to have the ticket renewed.
 * Renewed: a ticket under an older key, and every TLS 1.3 ticket (without
 * 2 a TLS 1.3 server sends no ticket after a resumption, and a client that
 * uses each ticket once, as RFC 8446 advises, could not resume again). */
static int ticket_key_cb(SSL *ssl, unsigned char *name, unsigned char *iv, EVP_CIPHER_CTX *c, EVP_MAC_CTX *h,
                         int enc) {
  tb_ticket_keys *t = keys_of(SSL_get_SSL_CTX(ssl));
  int rc = -1;
  size_t i;
  if (!t)
    return -1;
  pthread_rwlock_rdlock(&t->rw);
  if (enc) {
    memcpy(name, t->set->k[0].name, NAME_LEN);
    rc = key_init(&t->set->k[0], iv, c, h, 1) ? 1 : -1;
  } else {
    for (i = 0; i < t->set->n && memcmp(name, t->set->k[i].name, NAME_LEN) != 0; i++)
      ;
    if (i == t->set->n)
      rc = 0;
    else
      rc = key_init(&t->set->k[i], iv, c, h, 0) ? (i == 0 && SSL_version(ssl) < TLS1_3_VERSION ? 1 : 2) : -1;
  }
  pthread_rwlock_unlock(&t->rw);
  return rc;
}

int tb_ticket_keys_install(SSL_CTX *ctx) {
  tb_ticket_keys *t;
  unsigned char rnd[LONG_REC];
  tb_error err;
  if (keys_of(ctx))
    return 0;
  if (!(t = tb_calloc(1, sizeof *t)))
    return -1;
  if (pthread_rwlock_init(&t->rw, NULL) != 0) {
    free(t);
    return -1;
  }
  if (pthread_mutex_init(&t->mu, NULL) != 0) {
    pthread_rwlock_destroy(&t->rw);
    free(t);
    return -1;
  }
  if (RAND_priv_bytes(rnd, sizeof rnd) == 1)
    t->set = parse(rnd, sizeof rnd, &err, "(random)");
  OPENSSL_cleanse(rnd, sizeof rnd);
  tb_shared_init(&t->base, keys_destroy);
  if (!t->set) {
    tb_shared_release(&t->base);
    return -1;
  }
  if (tb_ctx_slot_attach(ctx, &keys_slot, &t->base) != 0)
    return -1;
  return SSL_CTX_set_tlsext_ticket_key_evp_cb(ctx, ticket_key_cb) == 1 ? 0 : -1;
}

int tb_ticket_keys_share(SSL_CTX *ctx, SSL_CTX *prev) {
  return tb_ctx_slot_share(ctx, prev, &keys_slot);
}

int tb_ticket_keys_load(SSL_CTX *ctx, const char *path, tb_error *err) {
  tb_ticket_keys *t = keys_of(ctx);
  struct stat st;
  keyset *s;
  char *p;
  if (!t) {
    tb_err_set(err, TB_ERR_STATE, "no ticket key store on this context");
    return -1;
  }
  if (!(s = read_file(path, &st, err)))
    return -1;
  if (!(p = tb_malloc(strlen(path) + 1))) {
    set_free(s);
    tb_err_set(err, TB_ERR_MEMORY, "out of memory reading session ticket keys");
    return -1;
  }
  memcpy(p, path, strlen(path) + 1);
  pthread_mutex_lock(&t->mu);
  free(t->path);
  t->path = p;
  t->seen = st;
  swap_in(t, s);
  pthread_mutex_unlock(&t->mu);
  return 0;
}

/* One stat when nothing changed. A refused file is remembered too, so it is
 * reported once, not at every check, and read again when it changes. */
int tb_ticket_keys_refresh(SSL_CTX *ctx, tb_error *err) {
  tb_ticket_keys *t = keys_of(ctx);
  struct stat now, st;
  keyset *s;
  int rc = 0;
  if (!t)
    return 0;
  pthread_mutex_lock(&t->mu);
  if (!t->path) {
    /* random keys: nothing to watch */
  } else if (stat(t->path, &now) != 0) {
    if (t->seen.st_ino != 0) {
      tb_err_set(err, TB_ERR_SSL, "session ticket key file %s is gone (%s): the keys read last stay in use",
                 t->path, strerror(errno));
      memset(&t->seen, 0, sizeof t->seen);
      rc = -1;
    }
  } else if (!same_file(&now, &t->seen)) {
    if ((s = read_file(t->path, &st, err))) {
      t->seen = st;
      swap_in(t, s);
      rc = 1;
    } else {
      t->seen = now;
      rc = -1;
    }
  }
  pthread_mutex_unlock(&t->mu);
  return rc;
}

int tb_ticket_keys_count(SSL_CTX *ctx) {
  tb_ticket_keys *t = keys_of(ctx);
  int n;
  if (!t)
    return 0;
  pthread_rwlock_rdlock(&t->rw);
  n = (int)t->set->n;
  pthread_rwlock_unlock(&t->rw);
  return n;
}
