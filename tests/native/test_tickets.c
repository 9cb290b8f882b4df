/* Session-ticket keys from a file (ticket_keys.c): two SSL_CTXs with the
 * same file resume each other's tickets in TLS 1.2 and 1.3, with different
 * files they do not; a rotated file keeps old tickets resumable and seals new
 * ones under its first key; bad files are refused with a reason that never
 * shows key bytes, and a bad file at reload keeps the keys in use. */
#include "test_support.h"
#include "ciphers.h"
#include "session_cache.h"
#include "ticket_keys.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/tb-tickets-XXXXXX";

/* A key whose name and secrets are printable, so a leak into a message shows. */
static void key_bytes(unsigned char *out, size_t len, char tag) {
  size_t i;
  for (i = 0; i < len; i++)
    out[i] = (unsigned char)(i < 16 ? tag : 'a' + (int)(i % 26));
}

/* Writes a file through a rename, as rotation tooling does; returns its path. */
static const char *put(const char *name, const unsigned char *buf, size_t len, mode_t mode) {
  static char path[4][256];
  static int slot;
  char tmp[300];
  char *p = path[slot++ % 4];
  int fd;
  snprintf(p, sizeof path[0], "%s/%s", dir, name);
  snprintf(tmp, sizeof tmp, "%s.tmp", p);
  fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  CHECK(fd >= 0 && write(fd, buf, len) == (ssize_t)len);
  close(fd);
  chmod(tmp, mode);
  CHECK(rename(tmp, p) == 0);
  return p;
}

static SSL_CTX *ctx_with(const char *path) {
  tb_error err;
  SSL_CTX *ctx = tb_ctx_new(&err);
  CHECK(ctx != NULL);
  if (ctx && path && tb_ticket_keys_load(ctx, path, &err) != 0) {
    fprintf(stderr, "load %s: %s\n", path, err.msg);
    CHECK(0);
  }
  return ctx;
}

/* A full handshake on ctx; the client's session (with its ticket) is returned. */
static SSL_SESSION *full(SSL_CTX *ctx, int version) {
  tb_error err;
  tb_pair p;
  SSL_SESSION *s = NULL;
  CHECK(tb_pair_open(&p, ctx, "ec") == 0);
  CHECK(tb_configure(p.client->ssl, NULL, NULL, 0, version, &err) == 0);
  if (tb_pair_handshake(&p) == 0)
    s = SSL_get1_session(p.client->ssl);
  CHECK(s != NULL && SSL_SESSION_has_ticket(s));
  SSL_set_shutdown(p.client->ssl, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
  SSL_set_shutdown(p.server->ssl, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
  tb_pair_close(&p);
  return s;
}

/* Offers s to a server on ctx: 1 if it resumed. *next gets the new session.
 * An OpenSSL client offers a TLS 1.3 ticket once, so a check that expects
 * no resumption takes a session no other check used. */
static int resumes(SSL_CTX *ctx, SSL_SESSION *s, int version, SSL_SESSION **next) {
  tb_error err;
  tb_pair p;
  int reused = -1;
  CHECK(tb_pair_open(&p, ctx, "ec") == 0);
  CHECK(tb_configure(p.client->ssl, NULL, NULL, 0, version, &err) == 0);
  CHECK(SSL_set_session(p.client->ssl, s) == 1);
  if (tb_pair_handshake(&p) == 0) {
    reused = SSL_session_reused(p.server->ssl);
    CHECK(reused == SSL_session_reused(p.client->ssl));
  }
  CHECK(reused >= 0);
  if (next)
    *next = SSL_get1_session(p.client->ssl);
  SSL_set_shutdown(p.client->ssl, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
  SSL_set_shutdown(p.server->ssl, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
  tb_pair_close(&p);
  return reused == 1;
}

static void test_shared_and_rotated(int version) {
  unsigned char a[80], b[80], ab[160], c[48];
  SSL_CTX *one, *two, *other, *short_keys, *newest;
  SSL_SESSION *s, *old, *renewed = NULL, *fresh;
  tb_error err;
  key_bytes(a, sizeof a, 'A');
  key_bytes(b, sizeof b, 'B');
  b[40] ^= 1;
  key_bytes(c, sizeof c, 'C');
  one = ctx_with(put("shared.key", a, sizeof a, 0600));
  two = ctx_with(put("shared.key", a, sizeof a, 0600));
  other = ctx_with(put("other.key", b, sizeof b, 0640));
  short_keys = ctx_with(put("short.key", c, sizeof c, 0400));

  s = full(one, version);
  CHECK(resumes(two, s, version, NULL));
  SSL_SESSION_free(s);
  s = full(one, version);
  CHECK(!resumes(other, s, version, NULL));
  SSL_SESSION_free(s);
  s = full(short_keys, version); /* nginx's 48-byte keys: AES-128 */
  CHECK(resumes(short_keys, s, version, NULL));
  SSL_SESSION_free(s);
  s = full(short_keys, version);
  CHECK(!resumes(one, s, version, NULL));
  SSL_SESSION_free(s);

  /* rotation: B first, A kept; two sees it at its next check */
  s = full(one, version);
  old = full(one, version);
  memcpy(ab, b, 80);
  memcpy(ab + 80, a, 80);
  CHECK(tb_ticket_keys_refresh(two, &err) == 0);
  put("shared.key", ab, sizeof ab, 0600);
  CHECK(tb_ticket_keys_refresh(two, &err) == 1);
  CHECK(tb_ticket_keys_refresh(two, &err) == 0);
  CHECK(tb_ticket_keys_count(two) == 2);
  CHECK(resumes(two, s, version, &renewed)); /* a ticket under the previous key */
  fresh = full(two, version);                  /* sealed under B */
  newest = ctx_with(put("b-only.key", b, sizeof b, 0600));
  CHECK(resumes(newest, fresh, version, NULL));
  CHECK(!resumes(newest, old, version, NULL));
  /* the ticket the resumption got back is sealed under B too */
  CHECK(renewed && resumes(newest, renewed, version, NULL));
  SSL_SESSION_free(s);
  SSL_SESSION_free(renewed);
  SSL_SESSION_free(old);
  SSL_SESSION_free(fresh);
  tb_ctx_free(one);
  tb_ctx_free(two);
  tb_ctx_free(other);
  tb_ctx_free(short_keys);
  tb_ctx_free(newest);
}

static void refused(const char *path, const char *why) {
  tb_error err;
  SSL_CTX *ctx = tb_ctx_new(&err);
  CHECK(ctx != NULL);
  memset(&err, 0, sizeof err);
  CHECK(tb_ticket_keys_load(ctx, path, &err) != 0);
  if (!strstr(err.msg, why)) {
    fprintf(stderr, "expected \"%s\" in: %s\n", why, err.msg);
    CHECK(0);
  }
  CHECK(!strstr(err.msg, "abcdefgh") && !strstr(err.msg, "AAAA") && !strstr(err.msg, "BBBB"));
  CHECK(tb_ticket_keys_count(ctx) == 1); /* its random key, still in use */
  tb_ctx_free(ctx);
}

static void test_bad_files(void) {
  unsigned char k[200], dup[160];
  char missing[300];
  SSL_CTX *ctx;
  SSL_SESSION *s;
  tb_error err;
  key_bytes(k, sizeof k, 'A');
  snprintf(missing, sizeof missing, "%s/none.key", dir);
  refused(missing, "No such file");
  refused(put("short.key", k, 47, 0600), "47 bytes");
  refused(put("odd.key", k, 100, 0600), "100 bytes");
  refused(put("world.key", k, 80, 0644), "readable by every user");
  refused(dir, "not a regular file");
  snprintf(missing, sizeof missing, "%s/fifo.key", dir);
  CHECK(mkfifo(missing, 0600) == 0);
  refused(missing, "not a regular file"); /* and no hang waiting for a writer */
  memset(k, 0, sizeof k);
  refused(put("zero.key", k, 80, 0600), "all zero");
  key_bytes(dup, 80, 'A');
  key_bytes(dup + 80, 80, 'A');
  dup[100] ^= 1;
  refused(put("dup.key", dup, sizeof dup, 0600), "same name");

  /* at reload a bad file keeps the keys read last, and is read again once fixed */
  ctx = ctx_with(put("reload.key", dup, 80, 0600));
  s = full(ctx, TLS1_3_VERSION);
  put("reload.key", dup, 47, 0600);
  memset(&err, 0, sizeof err);
  CHECK(tb_ticket_keys_refresh(ctx, &err) == -1 && strstr(err.msg, "47 bytes"));
  CHECK(tb_ticket_keys_refresh(ctx, &err) == 0); /* reported once */
  CHECK(resumes(ctx, s, TLS1_3_VERSION, NULL));
  SSL_SESSION_free(s);
  s = full(ctx, TLS1_3_VERSION);
  put("reload.key", dup, 80, 0666);
  CHECK(tb_ticket_keys_refresh(ctx, &err) == -1 && strstr(err.msg, "readable by every user"));
  snprintf(missing, sizeof missing, "%s/reload.key", dir);
  unlink(missing);
  CHECK(tb_ticket_keys_refresh(ctx, &err) == -1 && strstr(err.msg, "is gone"));
  CHECK(resumes(ctx, s, TLS1_3_VERSION, NULL));
  put("reload.key", dup, 160 - 80, 0600);
  CHECK(tb_ticket_keys_refresh(ctx, &err) == 1);
  SSL_SESSION_free(s);
  tb_ctx_free(ctx);
}

/* Contexts without a file: each has its own random key, and a second init
 * (tb_ctx_share) keeps the first one's. */
static void test_random_keys(void) {
  SSL_CTX *a = ctx_with(NULL), *b = ctx_with(NULL), *a2 = ctx_with(NULL);
  SSL_SESSION *s = full(a, TLS1_3_VERSION);
  CHECK(!resumes(b, s, TLS1_3_VERSION, NULL));
  SSL_SESSION_free(s);
  s = full(a, TLS1_3_VERSION);
  CHECK(tb_ctx_share(a2, a) == 0);
  CHECK(resumes(a2, s, TLS1_3_VERSION, NULL));
  SSL_SESSION_free(s);
  tb_ctx_free(a);
  tb_ctx_free(b);
  tb_ctx_free(a2);
}

int main(void) {
  char cmd[64];
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  test_shared_and_rotated(TLS1_2_VERSION);
  test_shared_and_rotated(TLS1_3_VERSION);
  test_bad_files();
  test_random_keys();
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0)
    fprintf(stderr, "could not remove %s\n", dir);
  return tb_test_finish("ticket key");
}
