/* The heap-in-use diagnostic (heap.h), looked up in the running C library. */
#include "heap.h"

#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

/* glibc's struct mallinfo2 (2.33 and later). The jar's libraries are compiled
 * against glibc 2.17's headers, which lack it, so that they load on older
 * systems: the function is looked up where the process runs. */
struct tb_mallinfo2 {
  size_t arena, ordblks, smblks, hblks, hblkhd, usmblks, fsmblks, uordblks, fordblks, keepcost;
};

long tb_heap_in_use(void) {
  struct tb_mallinfo2 (*get)(void);
  void *sym = dlsym(RTLD_DEFAULT, "mallinfo2");
  if (sym == NULL)
    return -1;
  memcpy(&get, &sym, sizeof get); /* ISO C has no object-to-function pointer cast */
  struct tb_mallinfo2 mi = get();
  return (long)(mi.uordblks + mi.hblkhd);
}
