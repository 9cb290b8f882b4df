/* Per-hit cost of a USDT probe site, measured at start on a site inside the
 * probe itself, so the cost reported for the target is a measured number. */
#ifndef TB_PROBE_CALIBRATE_H
#define TB_PROBE_CALIBRATE_H
#include "attach.h"

typedef struct tb_calib {
  int done;
  double per_hit_ns;     /* extra thread CPU per hit with a BPF program attached */
  double bare_ns;        /* the same site with nothing attached */
  unsigned long hits;    /* hits the BPF side counted (must equal the hits fired) */
  unsigned long fired;
  double deep_per_call_ns; /* uprobe + uretprobe on a sub-%rsp prologue; 0 if not measured */
} tb_calib;

/* 0 measured, -1 the site did not fire into BPF (message printed). */
int tb_calibrate(tb_session *s, tb_calib *c);
#endif
