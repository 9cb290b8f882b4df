/* One reference-counted object per SSLContext, hung on every SSL_CTX made
 * for that SSLContext (see ctx_shared.c). */
#ifndef TB_CTX_SHARED_H
#define TB_CTX_SHARED_H

#include <stdatomic.h>
#include <openssl/ssl.h>

/* The first member of a shared object. */
typedef struct tb_shared {
  atomic_int refs;
  void (*destroy)(struct tb_shared *);
} tb_shared;

/* Where one kind of shared object hangs on an SSL_CTX. */
typedef struct tb_ctx_slot {
  const char *name;
  atomic_int index; /* TB_SLOT_UNMADE until the first use */
} tb_ctx_slot;

#define TB_SLOT_UNMADE (-2)
#define TB_CTX_SLOT(name) {(name), TB_SLOT_UNMADE}

/* One reference, owned by the caller; destroy runs when the last goes. */
void tb_shared_init(tb_shared *s, void (*destroy)(tb_shared *));
void tb_shared_release(tb_shared *s);

/* The context's object, NULL when it has none (or the slot cannot be made). */
tb_shared *tb_ctx_slot_get(SSL_CTX *ctx, tb_ctx_slot *slot);
/* Hangs s on ctx, which takes the caller's reference; on failure (-1) that
 * reference is released. */
int tb_ctx_slot_attach(SSL_CTX *ctx, tb_ctx_slot *slot, tb_shared *s);
/* Makes ctx use prev's object (a second SSLContext.init keeps what the first
 * built), dropping ctx's own. 0, or -1 with ctx unchanged. */
int tb_ctx_slot_share(SSL_CTX *ctx, SSL_CTX *prev, tb_ctx_slot *slot);

#endif
