#ifndef TB_CIPHER_SPEC_H
#define TB_CIPHER_SPEC_H
#include "tb.h"

/* Expands an OpenSSL cipher string (Tomcat's "ciphers" attribute) into the
 * standard names of the suites it selects, in OpenSSL's order: TLS 1.3
 * suites first, then TLS 1.2 and below. TLS 1.3 suite names in the string
 * select the TLS 1.3 list; without any, OpenSSL's TLS 1.3 defaults stay, as
 * they do for SSL_CTX_set_cipher_list. fn is called once per suite; returns
 * the count or -1. */
int tb_cipher_spec_expand(const char *spec, void (*fn)(void *arg, const char *std), void *arg, tb_error *err);
#endif
