#ifndef TB_KEYLOG_H
#define TB_KEYLOG_H
#include "tb.h"
int tb_keylog_attach(SSL_CTX *ctx, const char *path, tb_error *err);
#endif
