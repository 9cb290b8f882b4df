/* tlsbridge's own heap calls go through here so a fault-injection build
 * (TB_FAULT_INJECTION) can make any one of them fail, like OpenSSL's. */
#ifndef TB_ALLOC_H
#define TB_ALLOC_H
#include <stdlib.h>

#if defined(TB_FAULT_INJECTION) && TB_FAULT_INJECTION
#include <openssl/crypto.h>
/* fault.c: 1 when the allocation being made is the armed one */
int tb_fault_hit(void);
/* Fail the nth allocation (tlsbridge's or OpenSSL's) counted from now, once;
 * 0 disarms. tb_fault_count() is the number counted since the last arm. */
void tb_fault_arm(long nth);
long tb_fault_count(void);
/* Routes OpenSSL's allocations through the counter: must run before any
 * other OpenSSL call in the process (0 when it was too late). */
int tb_fault_install(void);

static inline void *tb_malloc(size_t n) { return tb_fault_hit() ? NULL : malloc(n); }
static inline void *tb_calloc(size_t n, size_t m) { return tb_fault_hit() ? NULL : calloc(n, m); }
static inline void *tb_realloc(void *p, size_t n) { return tb_fault_hit() ? NULL : realloc(p, n); }
#else
static inline void *tb_malloc(size_t n) { return malloc(n); }
static inline void *tb_calloc(size_t n, size_t m) { return calloc(n, m); }
static inline void *tb_realloc(void *p, size_t n) { return realloc(p, n); }
#endif

#endif
