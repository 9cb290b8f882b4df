/* Reading the maps. Per-CPU maps are summed here; the on-CPU slice each
 * target thread is in the middle of is added so a thread that never leaves
 * the CPU during an interval is not reported idle. */
#include "snapshot.h"
#include "probe.skel.h"
#include "procfs.h"

#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

static int ncpus(void) {
  static int n;
  if (!n)
    n = libbpf_num_possible_cpus();
  return n > 0 ? n : 1;
}

/* Sums one per-CPU array element of u64 words into out[words]. */
static int percpu_sum(int fd, __u32 key, __u64 *out, size_t words) {
  int n = ncpus();
  __u64 *vals = calloc((size_t)n * words, sizeof *vals);
  int rc;
  if (!vals)
    return -1;
  rc = bpf_map_lookup_elem(fd, &key, vals);
  memset(out, 0, words * sizeof *out);
  if (rc == 0)
    for (int cpu = 0; cpu < n; cpu++)
      for (size_t w = 0; w < words; w++)
        out[w] += vals[(size_t)cpu * words + w];
  free(vals);
  return rc;
}

static void percpu_rows(int fd, __u64 *out, __u32 nkeys) {
  for (__u32 k = 0; k < nkeys; k++)
    percpu_sum(fd, k, &out[k], 1);
}

void tb_read_counters(const tb_session *s, struct tb_counters *out) {
  percpu_sum(bpf_map__fd(s->skel->maps.counters), 0, (__u64 *)out, sizeof *out / sizeof(__u64));
}

static int cmp_tid(const void *a, const void *b) {
  const tb_thread_snap *x = a, *y = b;
  return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static tb_thread_snap *find_tid(tb_thread_snap *t, size_t n, __u32 tid) {
  tb_thread_snap key = {.tid = tid};
  return bsearch(&key, t, n, sizeof *t, cmp_tid);
}

static int read_threads(const tb_session *s, tb_snapshot *snap) {
  int fd = bpf_map__fd(s->skel->maps.threads), ofd = bpf_map__fd(s->skel->maps.oncpu);
  size_t cap = 64, n = 0;
  __u32 key, next, *prev = NULL;
  struct tb_thread v;
  struct tb_oncpu *cur;
  int cpus = ncpus();
  snap->threads = malloc(cap * sizeof *snap->threads);
  if (!snap->threads)
    return -1;
  while (bpf_map_get_next_key(fd, prev, &next) == 0) {
    key = next;
    prev = &key;
    if (bpf_map_lookup_elem(fd, &key, &v))
      continue;
    if (n == cap) {
      tb_thread_snap *t = realloc(snap->threads, 2 * cap * sizeof *t);
      if (!t)
        return -1;
      snap->threads = t;
      cap *= 2;
    }
    snap->threads[n].tid = key;
    memcpy(snap->threads[n].comm, v.comm, TB_COMM_LEN);
    snap->threads[n].comm[TB_COMM_LEN - 1] = 0;
    snap->threads[n].on_cpu_ns = v.on_cpu_ns;
    n++;
  }
  qsort(snap->threads, n, sizeof *snap->threads, cmp_tid);
  snap->nthreads = n;
  /* slices in progress; room for one thread per CPU not in the map yet */
  if (n + (size_t)cpus > cap) {
    tb_thread_snap *t = realloc(snap->threads, (n + (size_t)cpus) * sizeof *t);
    if (!t)
      return -1;
    snap->threads = t;
    cap = n + (size_t)cpus;
  }
  cur = calloc((size_t)cpus, sizeof *cur);
  if (cur && bpf_map_lookup_elem(ofd, &(__u32){0}, cur) == 0) {
    size_t sorted = n;
    for (int c = 0; c < cpus; c++) {
      tb_thread_snap *t;
      if (!cur[c].tid || !cur[c].since_ns || cur[c].since_ns > snap->mono_ns)
        continue;
      t = find_tid(snap->threads, sorted, cur[c].tid);
      if (!t && n < cap) {
        /* on the CPU since before its first switch-out: not in the map yet */
        t = &snap->threads[n++];
        memset(t, 0, sizeof *t);
        t->tid = cur[c].tid;
        tb_tid_comm(s->opts->pid, (int)t->tid, t->comm, sizeof t->comm);
      }
      if (t)
        t->on_cpu_ns += snap->mono_ns - cur[c].since_ns;
    }
    if (n != sorted)
      qsort(snap->threads, n, sizeof *snap->threads, cmp_tid);
    snap->nthreads = n;
  }
  free(cur);
  for (size_t i = 0; i < n; i++)
    snap->on_cpu_ns += snap->threads[i].on_cpu_ns;
  return 0;
}

static void read_keyed(int fd, tb_keyed *out, int *n, int suites) {
  __u32 key, next, *prev = NULL;
  *n = 0;
  while (*n < TB_MAX_KEYED && bpf_map_get_next_key(fd, prev, &next) == 0) {
    key = next;
    prev = &key;
    memset(&out[*n], 0, sizeof out[*n]);
    out[*n].key = key;
    if (suites) {
      struct tb_suite v;
      if (bpf_map_lookup_elem(fd, &key, &v))
        continue;
      out[*n].count = v.count;
      memcpy(out[*n].name, v.name, TB_SUITE_NAME_LEN);
      out[*n].name[TB_SUITE_NAME_LEN - 1] = 0;
    } else {
      __u64 v;
      if (bpf_map_lookup_elem(fd, &key, &v))
        continue;
      out[*n].count = v;
    }
    (*n)++;
  }
}

int tb_snapshot_take(const tb_session *s, const tb_bpfcost *cost, tb_snapshot *snap) {
  unsigned m = s->opts->modes;
  memset(snap, 0, sizeof *snap);
  snap->mono_ns = tb_mono_ns();
  tb_read_counters(s, &snap->c);
  if (m & TB_MODE_PROVIDER) {
    percpu_rows(bpf_map__fd(s->skel->maps.hs_hist), snap->hs_hist, TB_HIST_SLOTS);
    read_keyed(bpf_map__fd(s->skel->maps.protocols), snap->protocols, &snap->nprotocols, 0);
    read_keyed(bpf_map__fd(s->skel->maps.suites), snap->suites, &snap->nsuites, 1);
    read_keyed(bpf_map__fd(s->skel->maps.groups), snap->groups, &snap->ngroups, 1);
  }
  if (m & TB_MODE_AGNOSTIC) {
    percpu_rows(bpf_map__fd(s->skel->maps.syscall_counts), snap->syscalls, TB_MAX_SYSCALL);
    percpu_rows(bpf_map__fd(s->skel->maps.io_hist), &snap->io_hist[0][0],
                TB_IO_KINDS * TB_HIST_SLOTS);
    if (read_threads(s, snap)) {
      tb_snapshot_free(snap);
      return -1;
    }
  }
  if (m & TB_MODE_DEEP)
    percpu_rows(bpf_map__fd(s->skel->maps.deep_hist), &snap->deep_hist[0][0],
                TB_DEEP_ROWS * TB_HIST_SLOTS);
  snap->bpf_run_ns = tb_bpfcost_ns(cost, s, &snap->c);
  snap->self_cpu_ns = tb_self_cpu_ns();
  return 0;
}

static __u64 sub(__u64 a, __u64 b) { return a > b ? a - b : 0; }

static void sub_words(__u64 *out, const __u64 *a, const __u64 *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    out[i] = b ? sub(a[i], b[i]) : a[i];
}

static void diff_keyed(tb_keyed *out, int *nout, const tb_keyed *a, int na, const tb_keyed *b,
                       int nb) {
  *nout = 0;
  for (int i = 0; i < na; i++) {
    __u64 before = 0;
    for (int j = 0; j < nb; j++)
      if (b[j].key == a[i].key)
        before = b[j].count;
    out[*nout] = a[i];
    out[*nout].count = sub(a[i].count, before);
    if (out[*nout].count)
      (*nout)++;
  }
}

int tb_snapshot_diff(const tb_snapshot *cur, const tb_snapshot *prev, tb_snapshot *out) {
  *out = *cur;
  out->threads = NULL;
  out->nthreads = 0;
  if (cur->nthreads) {
    out->threads = malloc(cur->nthreads * sizeof *out->threads);
    if (!out->threads)
      return -1;
  }
  if (!prev) {
    if (cur->nthreads)
      memcpy(out->threads, cur->threads, cur->nthreads * sizeof *out->threads);
    out->nthreads = cur->nthreads;
    return 0;
  }
  sub_words((__u64 *)&out->c, (const __u64 *)&cur->c, (const __u64 *)&prev->c,
            sizeof out->c / sizeof(__u64));
  sub_words(out->hs_hist, cur->hs_hist, prev->hs_hist, TB_HIST_SLOTS);
  sub_words(out->syscalls, cur->syscalls, prev->syscalls, TB_MAX_SYSCALL);
  sub_words(&out->io_hist[0][0], &cur->io_hist[0][0], &prev->io_hist[0][0],
            TB_IO_KINDS * TB_HIST_SLOTS);
  sub_words(&out->deep_hist[0][0], &cur->deep_hist[0][0], &prev->deep_hist[0][0],
            TB_DEEP_ROWS * TB_HIST_SLOTS);
  diff_keyed(out->protocols, &out->nprotocols, cur->protocols, cur->nprotocols, prev->protocols,
             prev->nprotocols);
  diff_keyed(out->suites, &out->nsuites, cur->suites, cur->nsuites, prev->suites, prev->nsuites);
  diff_keyed(out->groups, &out->ngroups, cur->groups, cur->ngroups, prev->groups, prev->ngroups);
  out->on_cpu_ns = 0;
  for (size_t i = 0; i < cur->nthreads; i++) {
    const tb_thread_snap *p = find_tid(prev->threads, prev->nthreads, cur->threads[i].tid);
    tb_thread_snap t = cur->threads[i];
    t.on_cpu_ns = sub(t.on_cpu_ns, p ? p->on_cpu_ns : 0);
    out->threads[out->nthreads++] = t;
    out->on_cpu_ns += t.on_cpu_ns;
  }
  out->bpf_run_ns = sub(cur->bpf_run_ns, prev->bpf_run_ns);
  out->self_cpu_ns = sub(cur->self_cpu_ns, prev->self_cpu_ns);
  out->mono_ns = cur->mono_ns - prev->mono_ns;
  return 0;
}

void tb_snapshot_free(tb_snapshot *snap) {
  free(snap->threads);
  snap->threads = NULL;
  snap->nthreads = 0;
}
