/* NSS key-log lines (SSLKEYLOGFILE format) for Wireshark, when a context is
 * asked to write them. Off unless configured; the file is shared by every
 * connection of the context, so writes take a lock. */
#include "keylog.h"
#include "tb_alloc.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct keylog {
  pthread_mutex_t mu;
  int fd;
} keylog;

static int keylog_index = -1;
static pthread_once_t keylog_once = PTHREAD_ONCE_INIT;

static void ex_free(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl, void *argp) {
  keylog *k = ptr;
  if (!k)
    return;
  close(k->fd);
  pthread_mutex_destroy(&k->mu);
  free(k);
}

static void make_index(void) {
  keylog_index = SSL_CTX_get_ex_new_index(0, "tlsbridge keylog", NULL, NULL, ex_free);
}

static void write_line(const SSL *ssl, const char *line) {
  keylog *k = SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), keylog_index);
  size_t n = strlen(line);
  char buf[1024];
  ssize_t w;
  if (!k || n + 1 > sizeof buf)
    return;
  memcpy(buf, line, n);
  buf[n] = '\n';
  pthread_mutex_lock(&k->mu);
  w = write(k->fd, buf, n + 1); /* one write per line: O_APPEND keeps lines whole */
  pthread_mutex_unlock(&k->mu);
  (void)w;
}

int tb_keylog_attach(SSL_CTX *ctx, const char *path, tb_error *err) {
  keylog *k;
  pthread_once(&keylog_once, make_index);
  if (keylog_index < 0 || SSL_CTX_get_ex_data(ctx, keylog_index)) {
    tb_err_set(err, TB_ERR_STATE, "key log already configured");
    return -1;
  }
  k = tb_calloc(1, sizeof *k);
  if (!k) {
    tb_err_set(err, TB_ERR_MEMORY, "out of memory");
    return -1;
  }
  k->fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (k->fd < 0) {
    tb_err_set(err, TB_ERR_IO, "cannot open key log file %s", path);
    free(k);
    return -1;
  }
  pthread_mutex_init(&k->mu, NULL);
  if (!SSL_CTX_set_ex_data(ctx, keylog_index, k)) {
    ex_free(NULL, k, NULL, 0, 0, NULL);
    tb_err_set(err, TB_ERR_MEMORY, "cannot attach the key log");
    return -1;
  }
  SSL_CTX_set_keylog_callback(ctx, write_line);
  return 0;
}
