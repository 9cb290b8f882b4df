/* BPF run-time accounting, sampled (see bpfcost.h). */
#include "bpfcost.h"
#include "probe.skel.h"
#include "snapshot.h"

#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#define WINDOW_NS 250000000ull  /* 250 ms on ... */
#define PERIOD_NS 5000000000ull /* ... every 5 s: 5% duty */

void tb_bpfcost_init(tb_bpfcost *b, int mode) {
  memset(b, 0, sizeof *b);
  b->mode = mode;
  b->fd = -1;
  b->available = 1;
}

static int group_of(const tb_session *s, const struct bpf_program *p) {
  const struct probe_bpf *k = s->skel;
  if (p == k->progs.on_switch)
    return TB_G_SWITCH;
  if (p == k->progs.on_sys_exit)
    return TB_G_SYSCALL;
  if (p == k->progs.on_handshake || p == k->progs.on_close || p == k->progs.on_error)
    return TB_G_USDT;
  if (p == k->progs.on_ssl_enter || p == k->progs.on_ssl_exit)
    return TB_G_DEEP;
  return -1; /* the calibration program: not part of the target's cost */
}

/* Kernel totals per group (only move while accounting is on). */
static void kernel_totals(const tb_session *s, uint64_t *rt, uint64_t *rc) {
  struct bpf_program *p;
  memset(rt, 0, TB_GROUPS * sizeof *rt);
  memset(rc, 0, TB_GROUPS * sizeof *rc);
  bpf_object__for_each_program(p, s->skel->obj) {
    struct bpf_prog_info info;
    __u32 len = sizeof info;
    int g = group_of(s, p), fd = bpf_program__fd(p);
    if (g < 0 || fd < 0)
      continue;
    memset(&info, 0, sizeof info);
    if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0) {
      rt[g] += info.run_time_ns;
      rc[g] += info.run_cnt;
    }
  }
}

static void stats_on(tb_bpfcost *b) {
  if (b->fd < 0)
    b->fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
  if (b->fd < 0)
    b->available = 0;
}

static void stats_off(tb_bpfcost *b) {
  if (b->fd >= 0)
    close(b->fd);
  b->fd = -1;
}

/* Ends the open sample window, adding what it measured. */
static void close_window(tb_bpfcost *b, const tb_session *s) {
  uint64_t rt[TB_GROUPS], rc[TB_GROUPS];
  kernel_totals(s, rt, rc);
  stats_off(b);
  for (int g = 0; g < TB_GROUPS; g++) {
    b->rt[g] += rt[g] - b->rt0[g];
    b->rc[g] += rc[g] - b->rc0[g];
  }
}

void tb_bpfcost_flush(tb_bpfcost *b, const tb_session *s) {
  if (b->mode == TB_BPFCOST_SAMPLED && b->fd >= 0)
    close_window(b, s);
}

static void group_runs(const struct tb_counters *c, uint64_t *runs) {
  runs[TB_G_SWITCH] = c->runs_switch;
  runs[TB_G_SYSCALL] = c->runs_syscall;
  runs[TB_G_USDT] = c->usdt_hits;
  runs[TB_G_DEEP] = c->deep_hits;
}

/* A group that has run a lot but was never sampled would count as free:
 * sample it now rather than at the next period. Rare runs (a few USDT hits)
 * cost little in total and would otherwise keep reopening windows. */
#define UNSAMPLED_RUNS 1000
static int unsampled(tb_bpfcost *b, const tb_session *s) {
  struct tb_counters c;
  uint64_t runs[TB_GROUPS];
  int due = 0;
  tb_read_counters(s, &c);
  group_runs(&c, runs);
  for (int g = 0; g < TB_GROUPS; g++)
    if (!b->rc[g] && runs[g] >= b->runs_at_window[g] + UNSAMPLED_RUNS)
      due = 1;
  if (due)
    memcpy(b->runs_at_window, runs, sizeof runs);
  return due;
}

uint64_t tb_bpfcost_tick(tb_bpfcost *b, const tb_session *s, uint64_t now) {
  if (b->mode == TB_BPFCOST_OFF || !b->available)
    return UINT64_MAX;
  if (b->mode == TB_BPFCOST_ALWAYS) {
    stats_on(b);
    return UINT64_MAX;
  }
  if (now < b->toggle_at &&
      !(b->fd < 0 && now >= b->closed_at + 1000000000ull && unsampled(b, s)))
    return b->toggle_at;
  if (b->fd < 0) {
    stats_on(b);
    kernel_totals(s, b->rt0, b->rc0);
    b->toggle_at = now + WINDOW_NS;
  } else {
    close_window(b, s);
    b->closed_at = now;
    b->toggle_at = now + PERIOD_NS - WINDOW_NS;
  }
  return b->toggle_at;
}

uint64_t tb_bpfcost_ns(const tb_bpfcost *b, const tb_session *s, const struct tb_counters *c) {
  uint64_t runs[TB_GROUPS], total = 0;
  if (b->mode == TB_BPFCOST_OFF || !b->available)
    return 0;
  if (b->mode == TB_BPFCOST_ALWAYS) {
    uint64_t rt[TB_GROUPS], rc[TB_GROUPS];
    kernel_totals(s, rt, rc);
    for (int g = 0; g < TB_GROUPS; g++)
      total += rt[g];
    return total;
  }
  group_runs(c, runs);
  for (int g = 0; g < TB_GROUPS; g++)
    if (b->rc[g])
      total += (uint64_t)((double)runs[g] * (double)b->rt[g] / (double)b->rc[g]);
  return total;
}

const char *tb_bpfcost_mode_name(const tb_bpfcost *b) {
  if (!b->available)
    return "unavailable";
  return b->mode == TB_BPFCOST_ALWAYS ? "always" : b->mode == TB_BPFCOST_OFF ? "off" : "sampled";
}

void tb_bpfcost_close(tb_bpfcost *b) { stats_off(b); }
