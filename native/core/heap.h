/* What the C library's malloc holds, read where the process runs: the soak
 * test's and the native tests' leak diagnostics. */
#ifndef TB_HEAP_H
#define TB_HEAP_H

/* Bytes the process's malloc has handed out and not taken back, over all
 * arenas plus mmap'd blocks (glibc's mallinfo2: uordblks + hblkhd), OpenSSL's
 * and the JVM's included; -1 where the C library has no mallinfo2 (glibc
 * before 2.33, musl). */
long tb_heap_in_use(void);
#endif
