/* What every output format shares: the report being printed, names of
 * protocols, syscalls and histogram rows, and the probe's own cost. */
#ifndef TB_PROBE_FORMAT_H
#define TB_PROBE_FORMAT_H
#include <stdio.h>
#include "attach.h"
#include "calibrate.h"
#include "snapshot.h"

typedef struct tb_meta {
  char kernel[128];
  char libbpf[32];
  char jdk[64];
  char openssl[96];
  char comm[32];
} tb_meta;

typedef struct tb_report {
  const char *type;        /* "interval" or "summary" */
  const tb_snapshot *d;    /* counts over the period */
  double elapsed_s;
  const tb_session *s;
  const tb_calib *cal;
  const tb_meta *meta;
  const char *errors_json; /* error samples of the period, as a JSON array body */
  const char *end_reason;  /* summary only: "duration", "signal", "target exited" */
  const tb_bpfcost *bpfcost;
} tb_report;

/* The probe's cost over a period. */
typedef struct tb_cost {
  unsigned long long self_ns, bpf_ns, probe_cpu_ns; /* probe_cpu = self + bpf */
  unsigned long long hits;       /* uprobe/USDT hits in the target */
  double per_hit_ns;             /* calibrated (USDT); 0 when not calibrated */
  double deep_per_call_ns;       /* calibrated (deep mode's uprobe + uretprobe) */
  unsigned long long target_est_ns; /* calibrated cost x hits: extra CPU in the target */
} tb_cost;

void tb_cost_of(const tb_report *r, tb_cost *out);

/* The plain counters, named once for every format. */
typedef struct tb_field {
  const char *json;  /* JSON field */
  const char *prom;  /* OpenMetrics family (tlsbridge_<prom>_total), NULL: JSON only */
  const char *help;
  size_t off;        /* in struct tb_counters */
  unsigned mode;     /* TB_MODE_* that measures it */
} tb_field;
extern const tb_field tb_fields[];
extern const int tb_nfields;
unsigned long long tb_field_value(const tb_field *fl, const struct tb_counters *c);
const char *tb_proto_name(unsigned v);
const char *tb_io_name(int kind);
const char *tb_deep_name(int fn);
const char *tb_syscall_name(unsigned nr);
/* Histogram bucket bounds: slot k is [lo, hi]. */
void tb_slot_bounds(int k, unsigned long long *lo, unsigned long long *hi);
int tb_hist_empty(const __u64 *h);
void tb_json_str(FILE *f, const char *s);
/* Whether the report carries provider-mode numbers (bytes_in is TLS bytes). */
int tb_has_provider(const tb_report *r);
/* The modes attached, plus TB_MODE_SYSCALLS when that part of agnostic runs. */
unsigned tb_measured(const tb_report *r);
#endif
