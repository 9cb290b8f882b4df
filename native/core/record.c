/* TLS record framing, read before OpenSSL sees a byte: the engine hands
 * OpenSSL whole records only, so nothing is ever consumed from a caller's
 * buffer that the JSSE contract says must stay there (BUFFER_UNDERFLOW). */
#include "tb.h"

int tb_record_scan(const uint8_t *p, size_t avail, size_t *len, int *type) {
  size_t body;
  if (avail < 1)
    return 0;
  /* 20..23 are the content types TLS 1.2/1.3 define; anything else (an
   * SSLv2 header has its top bit set) is not ours to frame. */
  if (p[0] < 20 || p[0] > 23)
    return -1;
  if (avail < TB_RECORD_HEADER)
    return 0;
  if (p[1] != 3)
    return -1;
  body = ((size_t)p[3] << 8) | p[4];
  if (body > TB_MAX_RECORD_BODY)
    return -1;
  *type = p[0];
  *len = TB_RECORD_HEADER + body;
  return avail >= *len ? 1 : 0;
}

/* An upper bound on the plaintext a protected record can carry: every
 * protection our suites use adds at least a 16-byte tag or IV+MAC, and no
 * record may carry more than 2^14. */
size_t tb_record_plaintext_bound(size_t body_len) {
  size_t n = body_len > 16 ? body_len - 16 : 0;
  return n > TB_MAX_PLAINTEXT ? TB_MAX_PLAINTEXT : n;
}
