/* Counters of live native objects. SSL_CTX and SSL are counted through
 * ex_data callbacks, which OpenSSL runs when it really creates and frees the
 * object (the last SSL_CTX_free, not ours), so a context kept alive by a
 * connection still counts until that connection is freed. */
#include "live.h"

#include <pthread.h>
#include <stdatomic.h>

static atomic_long live[TB_LIVE_KINDS];
static int registered;
static pthread_once_t once = PTHREAD_ONCE_INIT;
/* Set on objects counted at creation: OpenSSL also calls free_func for
 * objects made before the index existed, which were never counted. */
static char counted;

static void on_new(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long kind, void *argp) {
  (void)parent, (void)ptr, (void)argp;
  if (CRYPTO_set_ex_data(ad, idx, &counted))
    atomic_fetch_add_explicit(&live[kind], 1, memory_order_relaxed);
}

static void on_free(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long kind, void *argp) {
  (void)parent, (void)ad, (void)idx, (void)argp;
  if (ptr == &counted)
    atomic_fetch_sub_explicit(&live[kind], 1, memory_order_relaxed);
}

static void do_register(void) {
  registered = SSL_CTX_get_ex_new_index(TB_LIVE_CONTEXTS, NULL, on_new, NULL, on_free) >= 0 &&
               SSL_get_ex_new_index(TB_LIVE_SSLS, NULL, on_new, NULL, on_free) >= 0;
}

int tb_live_init(void) {
  pthread_once(&once, do_register);
  return registered;
}

void tb_live_add(int kind, int delta) {
  atomic_fetch_add_explicit(&live[kind], delta, memory_order_relaxed);
}

long tb_live_count(int kind) {
  if (kind < 0 || kind >= TB_LIVE_KINDS)
    return -1;
  return atomic_load_explicit(&live[kind], memory_order_relaxed);
}
