/* The one place OpenSSL's error queue becomes a message for Java. */
#include "tb.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <openssl/err.h>

void tb_err_clear(tb_error *err) {
  err->kind = TB_ERR_NONE;
  err->code = 0;
  err->msg[0] = '\0';
}

void tb_err_set(tb_error *err, int kind, const char *fmt, ...) {
  va_list ap;
  err->kind = kind;
  err->code = 0;
  va_start(ap, fmt);
  vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  va_end(ap);
}

/* Reasons whose OpenSSL text does not say which limit was hit; the name
 * leads so a Java user can tell a hostile or broken peer from a bug. Each
 * is the reason OpenSSL gives when it sends the alert named here. */
static const char *limit_name(unsigned long code) {
  if (ERR_GET_LIB(code) != ERR_LIB_SSL)
    return NULL;
  switch (ERR_GET_REASON(code)) {
  case SSL_R_PACKET_LENGTH_TOO_LONG:
  case SSL_R_ENCRYPTED_LENGTH_TOO_LONG:
  case SSL_R_DATA_LENGTH_TOO_LONG:
    return "record overflow (record_overflow alert): ";
  case SSL_R_EXCESSIVE_MESSAGE_SIZE:
    return "handshake message too large (illegal_parameter alert): ";
  default:
    return NULL;
  }
}

/* Drains the whole queue so a stale entry never leaks into the next call's
 * message; the first (innermost) reason leads because it names the cause.
 * OpenSSL 3's decoders try a key once per structure they might hold, so a
 * wrong password queues the same reasons twice: each is given once. */
void tb_err_from_openssl(tb_error *err, int kind, const char *what) {
  enum { SHOWN = 4 };
  char shown[SHOWN][200];
  size_t used;
  unsigned long code;
  const char *file, *data, *func;
  int line, flags, n = 0, i;

  err->kind = kind;
  err->code = 0;
  used = (size_t)snprintf(err->msg, sizeof err->msg, "%s", what);
  if (used >= sizeof err->msg)
    used = sizeof err->msg - 1;
  while ((code = ERR_get_error_all(&file, &line, &func, &data, &flags)) != 0) {
    const char *reason = ERR_reason_error_string(code);
    const char *lib = ERR_lib_error_string(code);
    const char *limit = limit_name(code);
    char *body;
    int w;
    if (err->code == 0)
      err->code = code;
    if (n >= SHOWN)
      continue;
    body = shown[n];
    if (reason)
      snprintf(body, sizeof shown[0], "%s%s (%s%s%s)", limit ? limit : "", reason, lib ? lib : "lib",
               (flags & ERR_TXT_STRING) && data && *data ? ": " : "", (flags & ERR_TXT_STRING) && data ? data : "");
    else
      snprintf(body, sizeof shown[0], "error:%08lX", code);
    for (i = 0; i < n && strcmp(shown[i], body) != 0; i++)
      ;
    if (i < n)
      continue;
    n++;
    w = snprintf(err->msg + used, sizeof err->msg - used, "%s%s", n == 1 ? ": " : "; ", body);
    if (w > 0)
      used += (size_t)w < sizeof err->msg - used ? (size_t)w : sizeof err->msg - used - 1;
  }
}
