// SPDX-License-Identifier: GPL-2.0-only
/* BPF side of tlsbridge-probe: counts and histograms only, all kept in
 * maps that user space reads once per interval. Every program filters to
 * the target process in the kernel before doing any work. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/usdt.bpf.h>
#include "probe.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by user space before load. */
const volatile __u32 target_tgid = 0;

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct tb_counters);
} counters SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, TB_HIST_SLOTS);
  __type(key, __u32);
  __type(value, __u64);
} hs_hist SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 16);
  __type(key, __u32);
  __type(value, __u64);
} protocols SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 64);
  __type(key, __u32);
  __type(value, struct tb_suite);
} suites SEC(".maps");

/* Handshakes per key-exchange group, keyed by OpenSSL's id for it. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 64);
  __type(key, __u32);
  __type(value, struct tb_suite);
} groups SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 64 * 1024);
} error_events SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, TB_MAX_SYSCALL);
  __type(key, __u32);
  __type(value, __u64);
} syscall_counts SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, TB_IO_KINDS * TB_HIST_SLOTS);
  __type(key, __u32);
  __type(value, __u64);
} io_hist SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, TB_MAX_THREADS);
  __type(key, __u32);
  __type(value, struct tb_thread);
} threads SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct tb_oncpu);
} oncpu SEC(".maps");

/* deep mode: call start per thread and function, then histograms */
struct deep_start {
  __u64 ts;
  __u64 ex_bytes_ptr; /* size_t * of SSL_read_ex/SSL_write_ex */
};

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 4096);
  __type(key, __u64);
  __type(value, struct deep_start);
} deep_starts SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, TB_DEEP_ROWS * TB_HIST_SLOTS);
  __type(key, __u32);
  __type(value, __u64);
} deep_hist SEC(".maps");

static __always_inline struct tb_counters *ctr(void) {
  __u32 zero = 0;
  return bpf_map_lookup_elem(&counters, &zero);
}

static __always_inline __u32 log2_slot(__u64 v) {
  __u32 r = 0, s;
  s = (v > 0xFFFFFFFFULL) << 5; v >>= s; r |= s;
  s = (v > 0xFFFF) << 4; v >>= s; r |= s;
  s = (v > 0xFF) << 3; v >>= s; r |= s;
  s = (v > 0xF) << 2; v >>= s; r |= s;
  s = (v > 0x3) << 1; v >>= s; r |= s;
  r |= (v >> 1);
  return r;
}

static __always_inline void hist_add(void *map, __u32 row, __u64 v) {
  __u32 idx = row * TB_HIST_SLOTS + log2_slot(v);
  __u64 *slot = bpf_map_lookup_elem(map, &idx);
  if (slot)
    *slot += 1; /* per-CPU: no other writer */
}

static __always_inline int is_target(void) {
  return (bpf_get_current_pid_tgid() >> 32) == target_tgid;
}

/* ---- provider mode: USDT sites in libtlsbridge ---- */

/* One more handshake under a name (a suite, a group) the map keys by id; the
 * name is read from the target once, when the id is first seen. */
static __always_inline void count_named(void *map, __u32 id, __u64 name, struct tb_counters *c) {
  struct tb_suite *s = bpf_map_lookup_elem(map, &id);
  if (s) {
    __sync_fetch_and_add(&s->count, 1);
    return;
  }
  struct tb_suite fresh = {.count = 1};
  bpf_probe_read_user_str(fresh.name, sizeof fresh.name, (const void *)name);
  if (bpf_map_update_elem(map, &id, &fresh, BPF_NOEXIST)) {
    s = bpf_map_lookup_elem(map, &id); /* lost a race with another CPU */
    if (s)
      __sync_fetch_and_add(&s->count, 1);
    else
      __sync_fetch_and_add(&c->lost_events, 1);
  }
}

SEC("usdt")
int BPF_USDT(on_handshake, __u64 engine, __u64 dur_ns, __u64 flags, __u64 version,
             __u64 suite_id, __u64 suite_name, __u64 group_id, __u64 group_name) {
  struct tb_counters *c = ctr();
  __u32 ver = (__u32)version;
  __u64 one = 1, *pc;
  if (!c)
    return 0;
  __sync_fetch_and_add(&c->usdt_hits, 1);
  __sync_fetch_and_add(&c->handshakes, 1);
  if (flags & 1)
    __sync_fetch_and_add(&c->resumed, 1);
  if (flags & 2)
    __sync_fetch_and_add(&c->client_handshakes, 1);
  hist_add(&hs_hist, 0, dur_ns);
  pc = bpf_map_lookup_elem(&protocols, &ver);
  if (pc)
    __sync_fetch_and_add(pc, 1);
  else if (bpf_map_update_elem(&protocols, &ver, &one, BPF_NOEXIST))
    __sync_fetch_and_add(&c->lost_events, 1);
  count_named(&suites, (__u32)suite_id, suite_name, c);
  /* a handshake without a key exchange (resumed TLS 1.2) has no group */
  if (group_id)
    count_named(&groups, (__u32)group_id, group_name, c);
  return 0;
}

SEC("usdt")
int BPF_USDT(on_close, __u64 engine, __u64 stats_ptr, __u64 stats_size) {
  struct tb_counters *c = ctr();
  struct tb_conn_stats st = {};
  __u64 n = stats_size < sizeof st ? stats_size : sizeof st;
  if (!c)
    return 0;
  __sync_fetch_and_add(&c->usdt_hits, 1);
  if (bpf_probe_read_user(&st, n & 0xff, (const void *)stats_ptr)) {
    __sync_fetch_and_add(&c->lost_events, 1);
    return 0;
  }
  __sync_fetch_and_add(&c->closes, 1);
  __sync_fetch_and_add(&c->bytes_in, st.bytes_in);
  __sync_fetch_and_add(&c->bytes_out, st.bytes_out);
  __sync_fetch_and_add(&c->app_in, st.app_in);
  __sync_fetch_and_add(&c->app_out, st.app_out);
  __sync_fetch_and_add(&c->records_in, st.records_in);
  __sync_fetch_and_add(&c->records_out, st.records_out);
  __sync_fetch_and_add(&c->ns_read, st.ns_read);
  __sync_fetch_and_add(&c->ns_write, st.ns_write);
  __sync_fetch_and_add(&c->ns_handshake, st.ns_handshake);
  __sync_fetch_and_add(&c->jni_calls, st.calls);
  return 0;
}

SEC("usdt")
int BPF_USDT(on_error, __u64 engine, __u64 kind, __u64 code, __u64 msg) {
  struct tb_counters *c = ctr();
  struct tb_error_event *ev;
  if (!c)
    return 0;
  __sync_fetch_and_add(&c->usdt_hits, 1);
  __sync_fetch_and_add(&c->errors, 1);
  ev = bpf_ringbuf_reserve(&error_events, sizeof *ev, 0);
  if (!ev) {
    __sync_fetch_and_add(&c->lost_events, 1);
    return 0;
  }
  ev->ts_ns = bpf_ktime_get_ns();
  ev->engine = engine;
  ev->kind = kind;
  ev->code = code;
  ev->tid = (__u32)bpf_get_current_pid_tgid();
  ev->pad = 0;
  if (bpf_probe_read_user_str(ev->msg, sizeof ev->msg, (const void *)msg) < 0)
    ev->msg[0] = 0;
  bpf_ringbuf_submit(ev, 0);
  return 0;
}

/* The probe's own calibration site (tlsbridge_probe:calibrate). */
SEC("usdt")
int BPF_USDT(on_calibrate, __u64 i) {
  struct tb_counters *c = ctr();
  if (c)
    __sync_fetch_and_add(&c->calib_hits, 1);
  return 0;
}

/* ---- agnostic mode: scheduler and syscalls, any JVM ---- */

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next) {
  /* tp_btf arguments are trusted kernel pointers: plain loads (with CO-RE
   * relocations) instead of probe-read helper calls, since this runs on
   * every context switch of the machine. */
  __u32 zero = 0;
  struct tb_oncpu *cur = bpf_map_lookup_elem(&oncpu, &zero);
  struct tb_counters *c = ctr();
  if (!cur || !c)
    return 0;
  c->runs_switch++;
  if (prev->tgid == (int)target_tgid) {
    __u32 tid = prev->pid;
    struct tb_thread *t;
    if (cur->tid == tid && cur->since_ns) {
      /* The scheduler's own account of the slice, as schedstat and
       * getrusage report it: it leaves out interrupt and steal time that
       * the wall clock between the two switches would include. */
      __u64 delta = bpf_ktime_get_ns() - cur->since_ns;
      __u64 run = prev->se.sum_exec_runtime;
      int fresh_entry = 0;
      if (cur->runtime0 && run >= cur->runtime0 && run - cur->runtime0 <= delta)
        delta = run - cur->runtime0;
      t = bpf_map_lookup_elem(&threads, &tid);
      if (!t) {
        struct tb_thread fresh = {};
        /* EEXIST means another CPU inserted it first: look it up again */
        bpf_map_update_elem(&threads, &tid, &fresh, BPF_NOEXIST);
        t = bpf_map_lookup_elem(&threads, &tid);
        fresh_entry = 1;
      }
      if (t) {
        __sync_fetch_and_add(&t->on_cpu_ns, delta);
        /* names change rarely (a JVM names a thread once, early) */
        if (fresh_entry || (t->switch_outs++ & 63) == 0)
          bpf_probe_read_kernel_str(t->comm, sizeof t->comm, prev->comm);
      } else {
        __sync_fetch_and_add(&c->lost_events, 1);
      }
    }
    cur->tid = 0;
    cur->since_ns = 0;
    cur->runtime0 = 0;
  }
  if (next->tgid == (int)target_tgid) {
    cur->tid = next->pid;
    cur->since_ns = bpf_ktime_get_ns();
    cur->runtime0 = next->se.sum_exec_runtime;
    c->switches++;
  }
  return 0;
}

/* x86-64 syscall numbers of the calls we histogram. */
static __always_inline int io_kind(long id) {
  switch (id) {
  case 0: return TB_IO_READ;
  case 1: return TB_IO_WRITE;
  case 19: return TB_IO_READV;
  case 20: return TB_IO_WRITEV;
  case 44: return TB_IO_SENDTO;
  case 45: return TB_IO_RECVFROM;
  case 46: return TB_IO_SENDMSG;
  case 47: return TB_IO_RECVMSG;
  default: return -1;
  }
}

/* One program at syscall exit does it all (count, bytes, accepts,
 * connects): the syscall tracepoints run for every process on the machine,
 * so each program attached there costs everyone. */
SEC("tp_btf/sys_exit")
int BPF_PROG(on_sys_exit, struct pt_regs *regs, long ret) {
  struct tb_counters *c;
  long id;
  int kind;
  __u32 key;
  __u64 *n;
  c = ctr();
  if (!c)
    return 0;
  c->runs_syscall++;
  if (!is_target())
    return 0;
  id = regs->orig_ax; /* trusted tp_btf pointer: a plain load */
  c->syscalls++;
  key = (__u32)id;
  if (key < TB_MAX_SYSCALL) {
    n = bpf_map_lookup_elem(&syscall_counts, &key);
    if (n)
      *n += 1;
  }
  if (id == 43 || id == 288) { /* accept, accept4 */
    if (ret >= 0)
      c->accepts++;
    return 0;
  }
  if (id == 42) { /* connect: 0, or -EINPROGRESS on a non-blocking socket */
    if (ret == 0 || ret == -115)
      c->connects++;
    return 0;
  }
  kind = io_kind(id);
  if (kind < 0 || ret < 0)
    return 0;
  hist_add(&io_hist, (__u32)kind, (__u64)ret);
  if (kind == TB_IO_READ || kind == TB_IO_RECVMSG || kind == TB_IO_RECVFROM || kind == TB_IO_READV)
    c->sys_bytes_in += (__u64)ret;
  else
    c->sys_bytes_out += (__u64)ret;
  return 0;
}

/* ---- deep mode: uprobes on libssl; the BPF cookie is the function ---- */

SEC("uprobe")
int BPF_KPROBE(on_ssl_enter, void *ssl, void *buf, __u64 num, __u64 *bytes) {
  __u64 fn = bpf_get_attach_cookie(ctx);
  __u64 key = (bpf_get_current_pid_tgid() << 3) | (fn & 7);
  struct deep_start st = {.ts = bpf_ktime_get_ns()};
  if (fn == TB_DEEP_SSL_READ_EX || fn == TB_DEEP_SSL_WRITE_EX)
    st.ex_bytes_ptr = (__u64)bytes;
  if (bpf_map_update_elem(&deep_starts, &key, &st, BPF_ANY)) {
    struct tb_counters *c = ctr();
    if (c)
      __sync_fetch_and_add(&c->lost_events, 1);
  }
  return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(on_ssl_exit, long ret) {
  __u64 fn = bpf_get_attach_cookie(ctx) & 7;
  __u64 key = (bpf_get_current_pid_tgid() << 3) | fn;
  struct deep_start *st = bpf_map_lookup_elem(&deep_starts, &key);
  struct tb_counters *c = ctr();
  __u64 bytes = 0;
  if (!st || !c)
    return 0;
  if (fn >= TB_DEEP_FNS) { /* calibration, not libssl */
    bpf_map_delete_elem(&deep_starts, &key);
    return 0;
  }
  __sync_fetch_and_add(&c->deep_hits, 2);
  __sync_fetch_and_add(&c->deep_calls[fn], 1);
  hist_add(&deep_hist, (__u32)fn * 2, bpf_ktime_get_ns() - st->ts);
  if (fn == TB_DEEP_SSL_READ || fn == TB_DEEP_SSL_WRITE) {
    int n = (int)ret; /* the C return type is int: the upper half of rax is junk */
    if (n > 0)
      bytes = (__u64)n;
  } else if (fn != TB_DEEP_SSL_DO_HANDSHAKE && (int)ret == 1 && st->ex_bytes_ptr) {
    bpf_probe_read_user(&bytes, sizeof bytes, (const void *)st->ex_bytes_ptr);
  }
  if (fn != TB_DEEP_SSL_DO_HANDSHAKE && bytes)
    hist_add(&deep_hist, (__u32)fn * 2 + 1, bytes);
  bpf_map_delete_elem(&deep_starts, &key);
  return 0;
}
