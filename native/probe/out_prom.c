/* OpenMetrics text: totals since attach as counters, log2 histograms as
 * cumulative buckets, ending with "# EOF" as the format requires. */
#include "output.h"

static int pid_of(const tb_report *r) { return r->s->opts->pid; }

static void counter(FILE *f, const tb_report *r, const char *name, const char *help,
                    unsigned long long v) {
  fprintf(f, "# TYPE tlsbridge_%s counter\n# HELP tlsbridge_%s %s\n", name, name, help);
  fprintf(f, "tlsbridge_%s_total{pid=\"%d\"} %llu\n", name, pid_of(r), v);
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

void tb_prom_report(FILE *f, const tb_report *r) {
  const tb_snapshot *d = r->d;
  const struct tb_counters *c = &d->c;
  unsigned on = r->s->modes_on;
  tb_cost cost;
  if (on & TB_MODE_PROVIDER) {
    counter(f, r, "handshakes", "TLS handshakes completed", c->handshakes);
    counter(f, r, "resumed_handshakes", "TLS handshakes that resumed a session", c->resumed);
    counter(f, r, "connections_closed", "engines freed", c->closes);
    counter(f, r, "tls_bytes_in", "TLS record bytes received (closed connections)", c->bytes_in);
    counter(f, r, "tls_bytes_out", "TLS record bytes sent (closed connections)", c->bytes_out);
    counter(f, r, "records_in", "TLS records received (closed connections)", c->records_in);
    counter(f, r, "records_out", "TLS records sent (closed connections)", c->records_out);
    counter(f, r, "jni_calls", "engine operations (JNI crossings)", c->jni_calls);
    counter(f, r, "errors", "engine errors", c->errors);
    fputs("# TYPE tlsbridge_handshake_ns histogram\n"
          "# HELP tlsbridge_handshake_ns handshake duration, first flight to done\n", f);
    hist(f, r, "handshake_ns", "", d->hs_hist);
  }
  if (on & TB_MODE_AGNOSTIC) {
    counter(f, r, "on_cpu_ns", "on-CPU time of the target's threads", d->on_cpu_ns);
    counter(f, r, "syscalls", "system calls made by the target", c->syscalls);
    counter(f, r, "accepts", "accepted connections", c->accepts);
    counter(f, r, "connects", "outgoing connections", c->connects);
    fputs("# TYPE tlsbridge_io_bytes histogram\n"
          "# HELP tlsbridge_io_bytes bytes per read/write-family system call\n", f);
    for (int k = 0; k < TB_IO_KINDS; k++) {
      char label[48];
      if (tb_hist_empty(d->io_hist[k]))
        continue;
      snprintf(label, sizeof label, ",syscall=\"%s\"", tb_io_name(k));
      hist(f, r, "io_bytes", label, d->io_hist[k]);
    }
  }
  if (on & TB_MODE_DEEP) {
    fputs("# TYPE tlsbridge_libssl_call_ns histogram\n"
          "# HELP tlsbridge_libssl_call_ns latency of libssl calls (deep mode)\n", f);
    for (int fn = 0; fn < TB_DEEP_FNS; fn++) {
      char label[48];
      snprintf(label, sizeof label, ",function=\"%s\"", tb_deep_name(fn));
      hist(f, r, "libssl_call_ns", label, d->deep_hist[fn * 2]);
    }
  }
  tb_cost_of(r, &cost);
  counter(f, r, "probe_cpu_ns", "CPU used by the probe: its process plus BPF run time",
          cost.probe_cpu_ns);
  counter(f, r, "probe_hits", "probe hits in the target", cost.hits);
  counter(f, r, "probe_lost_events", "events the probe could not record", c->lost_events);
  fputs("# EOF\n", f);
}
