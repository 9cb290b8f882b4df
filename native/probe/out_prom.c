/* OpenMetrics text: totals since attach as counters, log2 histograms as
 * cumulative buckets, ending with "# EOF" as the format requires. */
#include "output.h"

static int pid_of(const tb_report *r) { return r->s->opts->pid; }

static void counter(FILE *f, const tb_report *r, const char *name, const char *help,
                    unsigned long long v) {
  fprintf(f, "# TYPE tlsbridge_%s counter\n# HELP tlsbridge_%s %s\n", name, name, help);
  fprintf(f, "tlsbridge_%s_total{pid=\"%d\"} %llu\n", name, pid_of(r), v);
}

static void family(FILE *f, const char *name, const char *help) {
  fprintf(f, "# TYPE tlsbridge_%s histogram\n# HELP tlsbridge_%s %s\n", name, name, help);
}

static void hist(FILE *f, const tb_report *r, const char *name, const char *label,
                 const __u64 *h) {
  unsigned long long cum = 0;
  for (int k = 0; k < TB_HIST_SLOTS; k++) {
    unsigned long long lo, hi;
    if (!h[k])
      continue;
    cum += h[k];
    tb_slot_bounds(k, &lo, &hi);
    fprintf(f, "tlsbridge_%s_bucket{pid=\"%d\"%s,le=\"%llu\"} %llu\n", name, pid_of(r), label, hi,
            cum);
  }
  fprintf(f, "tlsbridge_%s_bucket{pid=\"%d\"%s,le=\"+Inf\"} %llu\n", name, pid_of(r), label, cum);
  fprintf(f, "tlsbridge_%s_count{pid=\"%d\"%s} %llu\n", name, pid_of(r), label, cum);
}

static void labelled(FILE *f, const tb_report *r, const char *name, const char *key,
                     const char *value, const __u64 *h) {
  char label[64];
  snprintf(label, sizeof label, ",%s=\"%s\"", key, value);
  hist(f, r, name, label, h);
}

void tb_prom_report(FILE *f, const tb_report *r) {
  const tb_snapshot *d = r->d;
  const struct tb_counters *c = &d->c;
  unsigned on = r->s->modes_on;
  tb_cost cost;
  for (int i = 0; i < tb_nfields; i++)
    if ((tb_measured(r) & tb_fields[i].mode) && tb_fields[i].prom)
      counter(f, r, tb_fields[i].prom, tb_fields[i].help, tb_field_value(&tb_fields[i], c));
  if (on & TB_MODE_PROVIDER) {
    family(f, "handshake_ns", "handshake duration, first flight to done");
    hist(f, r, "handshake_ns", "", d->hs_hist);
  }
  if (on & TB_MODE_AGNOSTIC) {
    counter(f, r, "on_cpu_ns", "on-CPU time of the target's threads", d->on_cpu_ns);
  }
  if (tb_measured(r) & TB_MODE_SYSCALLS) {
    family(f, "io_bytes", "bytes per read/write-family system call");
    for (int k = 0; k < TB_IO_KINDS; k++)
      if (!tb_hist_empty(d->io_hist[k]))
        labelled(f, r, "io_bytes", "syscall", tb_io_name(k), d->io_hist[k]);
  }
  if (on & TB_MODE_DEEP) {
    family(f, "libssl_call_ns", "latency of libssl calls (deep mode)");
    for (int fn = 0; fn < TB_DEEP_FNS; fn++)
      labelled(f, r, "libssl_call_ns", "function", tb_deep_name(fn), d->deep_hist[fn * 2]);
  }
  tb_cost_of(r, &cost);
  counter(f, r, "probe_cpu_ns", "CPU used by the probe: its process plus BPF run time",
          cost.probe_cpu_ns);
  counter(f, r, "probe_hits", "probe hits in the target", cost.hits);
  counter(f, r, "probe_lost_events", "events the probe could not record", c->lost_events);
  fputs("# EOF\n", f);
}
