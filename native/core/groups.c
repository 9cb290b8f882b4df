/* Key-exchange groups: which ones the OpenSSL in use implements (the
 * post-quantum hybrids arrive with 3.5, so the system flavour on 3.0 lacks
 * them), and the one a handshake negotiated, by the calls OpenSSL 3.0 to 4.0
 * all have. */
#include "tb.h"

const char *tb_negotiated_group(SSL *ssl, int *nid) {
  const char *name;
  int n;
  *nid = 0;
  /* From 3.2 OpenSSL answers a resumed TLS 1.2 session with the group of
   * the full handshake that made it; 3.0 answers nothing. No key exchange
   * happened in this one, so both report none. */
  if (SSL_session_reused(ssl) && SSL_version(ssl) < TLS1_3_VERSION)
    return NULL;
  n = SSL_get_negotiated_group(ssl);
  if (n == 0)
    return NULL;
  /* Groups without an OpenSSL NID (the ML-KEM hybrids) come back as
   * TLSEXT_nid_unknown | IANA id; SSL_group_to_name knows both forms. */
  name = SSL_group_to_name(ssl, n);
  if (name)
    *nid = n;
  return name;
}

int tb_group_supported(SSL_CTX *scratch, const char *name) {
  int ok = SSL_CTX_set1_groups_list(scratch, name) == 1;
  ERR_clear_error();
  return ok;
}
