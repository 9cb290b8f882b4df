/* /proc helpers: what the target is and where its libraries are. */
#ifndef TB_PROBE_PROCFS_H
#define TB_PROBE_PROCFS_H
#include <stddef.h>
#include <stdint.h>

/* A file mapped by the target, and a path this process can open to reach
 * the very same inode (the uprobe is per inode). */
typedef struct tb_mapped {
  char shown[4096];   /* the path as /proc/PID/maps shows it */
  char open_path[4200];
  int deleted;        /* unlinked since it was mapped */
  unsigned long start, end;
} tb_mapped;

/* 1 process exists, 0 no such process, -1 other error (errno set). */
int tb_pid_exists(int pid);
/* The thread-group (process) id of a task id, or -1. */
int tb_tgid_of(int tid);
/* The command name (comm) of pid into buf. */
int tb_pid_comm(int pid, char *buf, size_t len);
int tb_tid_comm(int pid, int tid, char *buf, size_t len);
/* Finds the first mapping whose file name (basename) starts with prefix.
 * 1 found, 0 not mapped, -1 cannot read the maps. */
int tb_find_mapping(int pid, const char *prefix, tb_mapped *m);
/* 1 when pid maps libjvm.so (a HotSpot JVM), with its path. */
int tb_is_jvm(int pid, tb_mapped *jvm);
/* Version text from the JDK's "release" file next to libjvm, or "unknown". */
void tb_jdk_version(const tb_mapped *jvm, char *buf, size_t len);
/* "OpenSSL 3.0.x ..." found in a mapped libcrypto, or "" when not found. */
void tb_openssl_version(const tb_mapped *libcrypto, char *buf, size_t len);
/* The version of an OpenSSL linked inside a libtlsbridge (the bundled
 * flavour), read from its file: 1 found, 0 none (a system flavour). */
int tb_linked_openssl(const tb_mapped *lib, char *buf, size_t len);
/* CPU time of this process (user + system) in ns. */
uint64_t tb_self_cpu_ns(void);
uint64_t tb_mono_ns(void);
#endif
