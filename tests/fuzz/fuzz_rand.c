/* Deterministic randomness for the fuzzers and the corpus generator. Each
 * side draws from its own stream, so a client replaying a recorded server
 * flight makes the very ClientHello and key share the recording did, and the
 * recorded Finished still verifies: the fuzzer reaches past the handshake.
 * The instruction-count harness (tests/icount) uses it for counts that
 * repeat exactly. Never linked into the library. */
#define OPENSSL_SUPPRESS_DEPRECATED
#include "fuzz_driver.h"

#include <openssl/rand.h>

static uint64_t state[3];
static int current;

static uint64_t next(void) {
  uint64_t z = (state[current] += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static int fz_bytes(unsigned char *buf, int num) {
  int i;
  for (i = 0; i < num; i++)
    buf[i] = (unsigned char)(next() >> 24);
  return 1;
}

static int fz_seed(const void *buf, int num) { return 1; }
static int fz_add(const void *buf, int num, double entropy) { return 1; }
static int fz_status(void) { return 1; }

static RAND_METHOD method = {fz_seed, fz_bytes, NULL, fz_add, fz_bytes, fz_status};

void fz_rand_restart(int stream) { state[stream] = 0x1111u * (uint64_t)(stream + 1); }

void fz_rand_reset(void) {
  fz_rand_restart(FZ_RAND_CTX);
  fz_rand_restart(FZ_RAND_CLIENT);
  fz_rand_restart(FZ_RAND_SERVER);
  current = FZ_RAND_CTX;
}

void fz_rand_use(int stream) { current = stream; }

int fz_rand_install(void) {
  fz_rand_reset();
  return RAND_set_rand_method(&method) ? 0 : -1;
}
