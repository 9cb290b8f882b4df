/* Everything the BPF side counted, read at one moment, and the difference
 * of two such readings (an interval). */
#ifndef TB_PROBE_SNAPSHOT_H
#define TB_PROBE_SNAPSHOT_H
#include <linux/types.h>
#include <stddef.h>
#include <stdint.h>
#include "attach.h"
#include "bpfcost.h"
#include "probe.h"

typedef struct tb_thread_snap {
  __u32 tid;
  char comm[TB_COMM_LEN];
  __u64 on_cpu_ns;
} tb_thread_snap;

typedef struct tb_keyed {
  __u32 key;
  char name[TB_SUITE_NAME_LEN];
  __u64 count;
} tb_keyed;

#define TB_MAX_KEYED 64

typedef struct tb_snapshot {
  uint64_t mono_ns;
  struct tb_counters c;
  __u64 hs_hist[TB_HIST_SLOTS];
  tb_keyed protocols[TB_MAX_KEYED], suites[TB_MAX_KEYED], groups[TB_MAX_KEYED];
  int nprotocols, nsuites, ngroups;
  __u64 syscalls[TB_MAX_SYSCALL];
  __u64 io_hist[TB_IO_KINDS][TB_HIST_SLOTS];
  __u64 deep_hist[TB_DEEP_ROWS][TB_HIST_SLOTS];
  tb_thread_snap *threads; /* sorted by tid */
  size_t nthreads;
  __u64 on_cpu_ns;         /* all threads, including slices still running */
  __u64 bpf_run_ns;        /* see bpfcost.h: sampled estimate or exact */
  __u64 self_cpu_ns;       /* the probe process's own CPU */
} tb_snapshot;

void tb_read_counters(const tb_session *s, struct tb_counters *out);
/* 0 ok, -1 error. Allocates threads; free with tb_snapshot_free. */
int tb_snapshot_take(const tb_session *s, const tb_bpfcost *cost, tb_snapshot *snap);
/* out = cur - prev (prev may be NULL: out = cur). out owns new memory. */
int tb_snapshot_diff(const tb_snapshot *cur, const tb_snapshot *prev, tb_snapshot *out);
void tb_snapshot_free(tb_snapshot *snap);
#endif
