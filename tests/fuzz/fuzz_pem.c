/* fuzz_pem: Tomcat-style PEM files (pem.c) and the key material built from
 * what they yield (keys.c). Input: byte 0 = password length (0x3f: none),
 * bit 0x40 = the rest is raw DER for tb_keymat_from_der (key, then cert,
 * cut where byte 1 says); then the password, then the file. The file is a
 * memfd read through /proc/self/fd, the path the loaders really take. */
#include "keys.h"
#include "pem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <openssl/err.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* every loader leaves OpenSSL's error queue empty, failing or not (tb_err_reset_shared) */
static void queue_empty(void) {
  if (ERR_peek_error() != 0)
    abort();
}

static void from_der(const uint8_t *p, size_t n) {
  size_t cut = n ? (size_t)p[0] * n / 256 : 0;
  const uint8_t *certs[1];
  size_t lens[1];
  tb_error err;
  if (n < 1)
    return;
  p++;
  n--;
  if (cut > n)
    cut = n;
  certs[0] = p + cut;
  lens[0] = n - cut;
  tb_keymat_free(tb_keymat_from_der(p, cut, certs, lens, 1, &err));
  queue_empty();
}

static void from_pem(int fd, const char *password) {
  char path[64];
  uint8_t *key = NULL;
  size_t keylen = 0;
  tb_der_list certs;
  tb_error err;
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  if (tb_pem_read_key(path, password, NULL, &key, &keylen, &err) == 0 && keylen == 0)
    abort(); /* success must hand back a key */
  queue_empty();
  if (tb_pem_read_certs(path, &certs, &err) == 0) {
    if (certs.n < 1)
      abort();
    if (key) {
      tb_keymat *k = tb_keymat_from_der(key, keylen, (const uint8_t *const *)certs.der, certs.len,
                                        certs.n, &err);
      tb_keymat_free(k);
    }
    tb_der_list_free(&certs);
  }
  tb_pem_key_free(key, keylen);
  queue_empty();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char password[64];
  size_t pwlen;
  int fd;
  if (size < 1)
    return 0;
  pwlen = data[0] & 0x3f;
  if (data[0] & 0x40) {
    from_der(data + 1, size - 1);
    return 0;
  }
  if (pwlen != 0x3f && pwlen > size - 1)
    pwlen = size - 1;
  if (pwlen != 0x3f) {
    memcpy(password, data + 1, pwlen);
    password[pwlen] = '\0';
  }
  data += 1 + (pwlen == 0x3f ? 0 : pwlen);
  size -= 1 + (pwlen == 0x3f ? 0 : pwlen);
  fd = memfd_create("fuzz_pem", MFD_CLOEXEC);
  if (fd < 0)
    abort();
  if (size > 0 && write(fd, data, size) != (ssize_t)size)
    abort();
  from_pem(fd, pwlen == 0x3f ? NULL : password);
  close(fd);
  return 0;
}
