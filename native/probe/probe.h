/* Shapes shared by the BPF side (probe.bpf.c) and the user-space side.
 * Everything here is read by user space from maps; the BPF side only counts. */
#ifndef TB_PROBE_H
#define TB_PROBE_H

#ifndef __VMLINUX_H__
#include <linux/types.h> /* the BPF side gets these from vmlinux.h */
#endif

#define TB_HIST_SLOTS 64  /* log2 buckets: slot k >= 1 holds [2^k, 2^(k+1)), slot 0 holds 0 and 1 */
#define TB_MAX_SYSCALL 512
#define TB_MAX_THREADS 8192
#define TB_COMM_LEN 16
#define TB_SUITE_NAME_LEN 48
#define TB_ERR_MSG_LEN 160

/* Syscalls whose return value is a byte count, as I/O histogram rows. */
enum tb_io_kind {
  TB_IO_READ, TB_IO_WRITE, TB_IO_RECVMSG, TB_IO_SENDMSG,
  TB_IO_RECVFROM, TB_IO_SENDTO, TB_IO_READV, TB_IO_WRITEV, TB_IO_KINDS
};

/* Library calls probed by deep mode. */
enum tb_deep_fn {
  TB_DEEP_SSL_READ, TB_DEEP_SSL_WRITE, TB_DEEP_SSL_READ_EX, TB_DEEP_SSL_WRITE_EX,
  TB_DEEP_SSL_DO_HANDSHAKE, TB_DEEP_FNS
};
/* deep_hist rows: per function, latency (ns) then bytes. */
#define TB_DEEP_ROWS (TB_DEEP_FNS * 2)

/* One per-CPU record of plain counters; user space sums the CPUs. */
struct tb_counters {
  /* provider mode (USDT) */
  __u64 handshakes, resumed, client_handshakes, closes;
  __u64 bytes_in, bytes_out, app_in, app_out, records_in, records_out;
  __u64 ns_read, ns_write, ns_handshake, jni_calls;
  __u64 errors, usdt_hits;
  /* agnostic mode */
  __u64 syscalls, accepts, connects, sys_bytes_in, sys_bytes_out;
  __u64 switches;
  /* runs of the machine-wide programs, target or not (their BPF cost) */
  __u64 runs_switch, runs_syscall;
  /* deep mode */
  __u64 deep_calls[TB_DEEP_FNS];
  __u64 deep_hits;
  /* events that could not be recorded (ring buffer or table full) */
  __u64 lost_events;
  /* calibration site in the probe itself */
  __u64 calib_hits;
};

/* The library's tb_stats as fired by tlsbridge:close (native/core/tb.h).
 * The probe reads min(fired size, sizeof) bytes, so fields may only ever be
 * appended there. */
struct tb_conn_stats {
  __u64 bytes_in, bytes_out;
  __u64 app_in, app_out;
  __u64 records_in, records_out;
  __u64 ns_read, ns_write, ns_handshake;
  __u64 calls;
  __u64 hs_start_ns;
};

/* Per-thread on-CPU time (agnostic mode), keyed by TID. */
struct tb_thread {
  __u64 on_cpu_ns;
  __u64 switch_outs;     /* paces the refresh of comm */
  char comm[TB_COMM_LEN];
};

/* The target thread currently on this CPU (per-CPU), so user space can add
 * the slice in progress when it reads. */
struct tb_oncpu {
  __u32 tid;
  __u32 pad;
  __u64 since_ns;
  __u64 runtime0;  /* the task's se.sum_exec_runtime when it came on */
};

struct tb_suite {
  __u64 count;
  char name[TB_SUITE_NAME_LEN];
};

/* Errors go to user space one by one (they are rare and carry a message). */
struct tb_error_event {
  __u64 ts_ns;
  __u64 engine;
  __u64 kind;
  __u64 code;
  __u32 tid;
  __u32 pad;
  char msg[TB_ERR_MSG_LEN];
};

#endif
