/* fuzz_server / fuzz_client: one engine fed peer bytes from the input
 * (format in fuzz_driver.h). FZ_CLIENT picks the side at compile time. */
#include "fuzz_driver.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_run(FZ_CLIENT, data, size);
  return 0;
}
