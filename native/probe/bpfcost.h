/* How much CPU the BPF programs themselves use. The kernel's run-time
 * accounting (bpf_enable_stats) adds two clock reads to every program run,
 * and the syscall and scheduler programs run for every process on the
 * machine, so by default it is switched on only in short sample windows:
 * ns per run is measured there and multiplied by run counts the programs
 * keep themselves. --bpf-stats always keeps it on (exact, dearer); off
 * reports no BPF time. */
#ifndef TB_PROBE_BPFCOST_H
#define TB_PROBE_BPFCOST_H
#include <stdint.h>
#include "attach.h"
#include "probe.h"

enum tb_bpfcost_mode { TB_BPFCOST_SAMPLED = 0, TB_BPFCOST_ALWAYS = 1, TB_BPFCOST_OFF = 2 };

/* Programs grouped by what counts their runs. */
enum { TB_G_SWITCH, TB_G_SYSCALL, TB_G_USDT, TB_G_DEEP, TB_GROUPS };

typedef struct tb_bpfcost {
  int mode;
  int available;           /* the kernel accepted bpf_enable_stats */
  int fd;                  /* stats fd while accounting is on */
  uint64_t toggle_at;      /* mono ns of the next window start or end */
  uint64_t closed_at;      /* when the last window ended */
  uint64_t rt0[TB_GROUPS], rc0[TB_GROUPS]; /* at window start */
  uint64_t rt[TB_GROUPS], rc[TB_GROUPS];   /* summed over closed windows */
  uint64_t runs_at_window[TB_GROUPS];      /* run counts when an extra window opened */
} tb_bpfcost;

void tb_bpfcost_init(tb_bpfcost *b, int mode);
/* Opens or closes a sample window when due; returns the next due time. */
uint64_t tb_bpfcost_tick(tb_bpfcost *b, const tb_session *s, uint64_t now);
/* BPF ns since attach for these cumulative counters. */
uint64_t tb_bpfcost_ns(const tb_bpfcost *b, const tb_session *s, const struct tb_counters *c);
/* Folds in the window still open (before the final reading). */
void tb_bpfcost_flush(tb_bpfcost *b, const tb_session *s);
const char *tb_bpfcost_mode_name(const tb_bpfcost *b);
void tb_bpfcost_close(tb_bpfcost *b);
#endif
