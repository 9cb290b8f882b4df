/* The allocation-failure hook of fault-injection builds: one counter shared
 * by tlsbridge's allocations and OpenSSL's, so a test can walk N over every
 * allocation of a connection and fail each in turn. Never in release builds
 * (CMake adds this file only with TB_FAULT_INJECTION). */
#include "tb_alloc.h"

#include <stdatomic.h>
#include <string.h>
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/common_interface_defs.h>
#endif

static atomic_long counted;
static atomic_long armed; /* 0: count only */

int tb_fault_hit(void) {
  long n = atomic_fetch_add_explicit(&counted, 1, memory_order_relaxed) + 1;
  if (n != atomic_load_explicit(&armed, memory_order_relaxed))
    return 0;
#ifdef __SANITIZE_ADDRESS__
  /* TB_FAULT_TRACE=1: where the failed allocation was, to read a failure */
  if (getenv("TB_FAULT_TRACE"))
    __sanitizer_print_stack_trace();
#endif
  return 1;
}

void tb_fault_arm(long nth) {
  atomic_store(&armed, 0);
  atomic_store(&counted, 0);
  atomic_store(&armed, nth);
}

long tb_fault_count(void) { return atomic_load(&counted); }

/* OpenSSL 3.0's session cache does not survive a failed lhash insert:
 * SSL_CTX_add_session then links the session into its LRU list but not into
 * the hash, and SSL_CTX_flush_sessions (from SSL_CTX_free) loops forever
 * pushing the same session onto a stack until memory runs out. That is
 * OpenSSL's bug, not one tlsbridge can handle, so lhash allocations are
 * never failed (they are not counted either). */
static int spared(const char *file) { return file && strstr(file, "lhash") != NULL; }

static void *ossl_malloc(size_t n, const char *file, int line) {
  return spared(file) || !tb_fault_hit() ? malloc(n) : NULL;
}

static void *ossl_realloc(void *p, size_t n, const char *file, int line) {
  if (n == 0) { /* a shrink to nothing is a free, which cannot fail */
    free(p);
    return NULL;
  }
  return spared(file) || !tb_fault_hit() ? realloc(p, n) : NULL;
}

static void ossl_free(void *p, const char *file, int line) { free(p); }

int tb_fault_install(void) { return CRYPTO_set_mem_functions(ossl_malloc, ossl_realloc, ossl_free); }
