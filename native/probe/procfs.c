/* Reading /proc. The library may be extracted to a temporary file that was
 * unlinked after loading, or live in another mount namespace; in both cases
 * the path in /proc/PID/maps cannot be opened from here, but
 * /proc/PID/map_files/START-END (or /proc/PID/root/PATH) reaches the same
 * inode, which is all a uprobe needs. */
#include "procfs.h"
#include "../core/linked_openssl.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char DELETED[] = " (deleted)";

/* A zombie (exited, not yet reaped by its parent) counts as gone: it will
 * never run again. */
int tb_pid_exists(int pid) {
  char p[64], buf[512], *close_paren;
  size_t n;
  FILE *f;
  snprintf(p, sizeof p, "/proc/%d/stat", pid);
  f = fopen(p, "r");
  if (!f)
    return errno == ENOENT || errno == ESRCH ? 0 : -1;
  n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  close_paren = strrchr(buf, ')');
  if (close_paren && close_paren[1] == ' ' && (close_paren[2] == 'Z' || close_paren[2] == 'X'))
    return 0;
  return 1;
}

int tb_tgid_of(int tid) {
  char p[64], line[256];
  int tgid = -1;
  FILE *f;
  snprintf(p, sizeof p, "/proc/%d/status", tid);
  f = fopen(p, "r");
  if (!f)
    return -1;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "Tgid: %d", &tgid) == 1)
      break;
  fclose(f);
  return tgid;
}

int tb_pid_comm(int pid, char *buf, size_t len) { return tb_tid_comm(pid, pid, buf, len); }

int tb_tid_comm(int pid, int tid, char *buf, size_t len) {
  char p[96];
  FILE *f;
  snprintf(p, sizeof p, "/proc/%d/task/%d/comm", pid, tid);
  f = fopen(p, "r");
  if (!f || !fgets(buf, (int)len, f)) {
    if (f)
      fclose(f);
    snprintf(buf, len, "?");
    return -1;
  }
  fclose(f);
  buf[strcspn(buf, "\n")] = 0;
  return 0;
}

/* Same root as ours? Then the maps path is valid here as it stands. */
static int same_root(int pid) {
  char p[64];
  struct stat a, b;
  snprintf(p, sizeof p, "/proc/%d/root", pid);
  if (stat(p, &a) || stat("/", &b))
    return 1;
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static void choose_open_path(int pid, tb_mapped *m) {
  if (m->deleted || access(m->shown, R_OK) != 0) {
    snprintf(m->open_path, sizeof m->open_path, "/proc/%d/map_files/%lx-%lx", pid, m->start, m->end);
    if (!m->deleted && !same_root(pid))
      snprintf(m->open_path, sizeof m->open_path, "/proc/%d/root%s", pid, m->shown);
  } else if (!same_root(pid)) {
    snprintf(m->open_path, sizeof m->open_path, "/proc/%d/root%s", pid, m->shown);
  } else {
    snprintf(m->open_path, sizeof m->open_path, "%s", m->shown);
  }
}

int tb_find_mapping(int pid, const char *prefix, tb_mapped *m) {
  char p[64], line[4400];
  FILE *f;
  int found = 0;
  snprintf(p, sizeof p, "/proc/%d/maps", pid);
  f = fopen(p, "r");
  if (!f)
    return -1;
  while (!found && fgets(line, sizeof line, f)) {
    unsigned long start, end, off;
    int pos = 0;
    char *path, *base;
    size_t n;
    if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %n", &start, &end, &off, &pos) < 3 || pos == 0)
      continue;
    path = line + pos;
    path[strcspn(path, "\n")] = 0;
    if (path[0] != '/')
      continue;
    base = strrchr(path, '/') + 1;
    if (strncmp(base, prefix, strlen(prefix)) != 0)
      continue;
    memset(m, 0, sizeof *m);
    n = strlen(path);
    if (n > sizeof DELETED - 1 && strcmp(path + n - (sizeof DELETED - 1), DELETED) == 0) {
      m->deleted = 1;
      path[n - (sizeof DELETED - 1)] = 0;
    }
    snprintf(m->shown, sizeof m->shown, "%s", path);
    m->start = start;
    m->end = end;
    choose_open_path(pid, m);
    found = 1;
  }
  fclose(f);
  return found;
}

int tb_is_jvm(int pid, tb_mapped *jvm) {
  return tb_find_mapping(pid, "libjvm.so", jvm) == 1;
}

void tb_jdk_version(const tb_mapped *jvm, char *buf, size_t len) {
  /* .../lib/server/libjvm.so -> .../release */
  char home[4200], line[512];
  char *cut;
  FILE *f;
  snprintf(buf, len, "unknown");
  snprintf(home, sizeof home, "%s", jvm->shown);
  for (int i = 0; i < 3; i++) {
    cut = strrchr(home, '/');
    if (!cut)
      return;
    *cut = 0;
  }
  if (strlen(home) + sizeof "/release" > sizeof home)
    return;
  strcat(home, "/release");
  f = fopen(home, "r");
  if (!f)
    return;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "JAVA_VERSION=\"", 14) == 0) {
      line[strcspn(line + 14, "\"") + 14] = 0;
      snprintf(buf, len, "%s", line + 14);
      break;
    }
  }
  fclose(f);
}

/* Reads path in chunks and calls match at every offset with the bytes there
 * and how many follow (at least TAIL until the end of the file; the chunk is
 * NUL-terminated); match returns 1 once it copied what it wants into buf.
 * 1 found, 0 not. Strings sought are shorter than TAIL. */
static int scan_file(const char *path, int (*match)(const char *s, size_t avail, char *buf, size_t len), char *buf,
                     size_t len) {
  enum { TAIL = 128 };
  char chunk[65536 + TAIL];
  size_t have = 0, got, n, stop, i;
  int eof = 0, found = 0;
  FILE *f = fopen(path, "rb");
  if (!f)
    return 0;
  while (!eof && !found) {
    got = fread(chunk + have, 1, sizeof chunk - have - 1, f);
    eof = got == 0;
    n = have + got;
    chunk[n] = 0;
    stop = eof ? n : n > TAIL ? n - TAIL : 0;
    for (i = 0; i < stop && !found; i++)
      found = match(chunk + i, n - i, buf, len);
    /* the unscanned tail leads the next chunk: a string across two is found */
    have = n - stop;
    memmove(chunk, chunk + stop, have);
  }
  fclose(f);
  return found;
}

/* OPENSSL_VERSION_TEXT ("OpenSSL 3.0.17 1 Jul 2025") is a plain string in
 * libcrypto's read-only data. */
static int version_text(const char *s, size_t avail, char *buf, size_t len) {
  static const char key[] = "OpenSSL ";
  size_t l;
  if (avail < sizeof key + 3 || memcmp(s, key, sizeof key - 1) != 0 || s[8] < '1' || s[8] > '9' || s[9] != '.' ||
      s[10] < '0' || s[10] > '9')
    return 0;
  l = strnlen(s, avail);
  if (l >= avail || l >= 64)
    return 0;
  snprintf(buf, len, "%s", s);
  return 1;
}

void tb_openssl_version(const tb_mapped *libcrypto, char *buf, size_t len) {
  snprintf(buf, len, "%s", "");
  scan_file(libcrypto->open_path, version_text, buf, len);
}

/* The bundled flavour's tag (core/linked_openssl.h), then the version text. */
static int linked_text(const char *s, size_t avail, char *buf, size_t len) {
  static const char tag[] = TB_LINKED_OPENSSL_TAG;
  size_t l;
  if (avail < sizeof tag || memcmp(s, tag, sizeof tag - 1) != 0)
    return 0;
  s += sizeof tag - 1;
  avail -= sizeof tag - 1;
  l = strnlen(s, avail);
  if (l >= avail || l == 0 || l >= 64)
    return 0;
  snprintf(buf, len, "%s", s);
  return 1;
}

int tb_linked_openssl(const tb_mapped *lib, char *buf, size_t len) {
  snprintf(buf, len, "%s", "");
  return scan_file(lib->open_path, linked_text, buf, len);
}

uint64_t tb_self_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t tb_mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
