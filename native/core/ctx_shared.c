/* Objects that outlive one SSL_CTX: a second SSLContext.init makes a new
 * SSL_CTX but must keep the first one's session store and ticket keys, and
 * engines made from the old context keep using them. Each such object is
 * counted, hung on every SSL_CTX that uses it through ex_data (OpenSSL drops
 * the context's reference when the context is freed), and destroyed with its
 * last reference. */
#include "ctx_shared.h"

#include <pthread.h>

static pthread_mutex_t index_mu = PTHREAD_MUTEX_INITIALIZER;

void tb_shared_init(tb_shared *s, void (*destroy)(tb_shared *)) {
  atomic_init(&s->refs, 1);
  s->destroy = destroy;
}

void tb_shared_release(tb_shared *s) {
  if (s && atomic_fetch_sub(&s->refs, 1) == 1)
    s->destroy(s);
}

static void ex_free(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl, void *argp) {
  (void)parent, (void)ad, (void)idx, (void)argl, (void)argp;
  tb_shared_release(ptr);
}

/* Made on first use, once per slot; a failure (-1) stays a failure, so every
 * later install fails the same way instead of retrying with a half state. */
static int index_of(tb_ctx_slot *slot) {
  int i = atomic_load(&slot->index);
  if (i != TB_SLOT_UNMADE)
    return i;
  pthread_mutex_lock(&index_mu);
  i = atomic_load(&slot->index);
  if (i == TB_SLOT_UNMADE) {
    i = SSL_CTX_get_ex_new_index(0, (void *)slot->name, NULL, NULL, ex_free);
    atomic_store(&slot->index, i < 0 ? -1 : i);
  }
  pthread_mutex_unlock(&index_mu);
  return i < 0 ? -1 : i;
}

tb_shared *tb_ctx_slot_get(SSL_CTX *ctx, tb_ctx_slot *slot) {
  int i = index_of(slot);
  return i < 0 ? NULL : SSL_CTX_get_ex_data(ctx, i);
}

int tb_ctx_slot_attach(SSL_CTX *ctx, tb_ctx_slot *slot, tb_shared *s) {
  int i = index_of(slot);
  if (i < 0 || !SSL_CTX_set_ex_data(ctx, i, s)) {
    tb_shared_release(s);
    return -1;
  }
  return 0;
}

int tb_ctx_slot_share(SSL_CTX *ctx, SSL_CTX *prev, tb_ctx_slot *slot) {
  tb_shared *mine = tb_ctx_slot_get(ctx, slot), *theirs = tb_ctx_slot_get(prev, slot);
  if (!theirs || theirs == mine)
    return 0;
  atomic_fetch_add(&theirs->refs, 1);
  if (!SSL_CTX_set_ex_data(ctx, index_of(slot), theirs)) {
    tb_shared_release(theirs);
    return -1;
  }
  tb_shared_release(mine);
  return 0;
}
