/* Human output, in the style of bcc tools: a few lines per interval, and
 * log2 histograms with bars in the summary. */
#include "output.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *sz(unsigned long long v, char *buf, size_t len) {
  if (v >= 10ull << 30)
    snprintf(buf, len, "%.1f GiB", (double)v / (1ull << 30));
  else if (v >= 10ull << 20)
    snprintf(buf, len, "%.1f MiB", (double)v / (1ull << 20));
  else if (v >= 10ull << 10)
    snprintf(buf, len, "%.1f KiB", (double)v / (1ull << 10));
  else
    snprintf(buf, len, "%llu B", v);
  return buf;
}

static double ms(unsigned long long ns) { return (double)ns / 1e6; }

void tb_human_meta(FILE *f, const tb_report *r) {
  const tb_session *s = r->s;
  fprintf(f, "Tracing PID %d (%s%s), modes: %s", s->opts->pid, r->meta->comm,
          s->is_jvm ? ", JVM" : "", tb_modes_str(s->modes_on));
  if (s->opts->modes & ~s->modes_on)
    fprintf(f, " (waiting for: %s)", tb_modes_str(s->opts->modes & ~s->modes_on));
  fprintf(f, "\n  kernel %s, libbpf %s, JDK %s, %s\n", r->meta->kernel, r->meta->libbpf,
          r->meta->jdk, r->meta->openssl[0] ? r->meta->openssl : "OpenSSL not loaded");
  if (s->have_lib)
    fprintf(f, "  libtlsbridge: %s%s\n", s->lib.shown, s->lib.deleted ? " (deleted; via map_files)" : "");
  if (s->modes_on & TB_MODE_DEEP)
    fprintf(f, "  deep mode is HEAVY: uprobe+uretprobe on every SSL_read/SSL_write call\n");
  if (r->cal && r->cal->done)
    fprintf(f, "  per-hit cost of a probe site: %.0f ns (calibrated, %lu hits)\n", r->cal->per_hit_ns,
            r->cal->hits);
  if (r->cal && r->cal->deep_per_call_ns > 0)
    fprintf(f, "  per-call cost of deep mode's uprobe+uretprobe: %.0f ns (calibrated)\n",
            r->cal->deep_per_call_ns);
  fprintf(f, "Ctrl-C to end%s.\n", s->opts->duration_s > 0 ? " early" : "");
}

static void hist(FILE *f, const char *title, const char *unit, const __u64 *h) {
  unsigned long long max = 0;
  int lo_k = -1, hi_k = -1;
  for (int k = 0; k < TB_HIST_SLOTS; k++)
    if (h[k]) {
      if (lo_k < 0)
        lo_k = k;
      hi_k = k;
      if (h[k] > max)
        max = h[k];
    }
  if (lo_k < 0)
    return;
  fprintf(f, "  %s\n  %20s : %-8s |%-40s|\n", title, unit, "count", "distribution");
  for (int k = lo_k; k <= hi_k; k++) {
    unsigned long long lo, hi;
    char range[48], bar[41];
    int w = (int)(40 * h[k] / max);
    tb_slot_bounds(k, &lo, &hi);
    snprintf(range, sizeof range, "%llu -> %llu", lo, hi);
    memset(bar, '*', (size_t)w);
    bar[w] = 0;
    fprintf(f, "  %20s : %-8llu |%-40s|\n", range, (unsigned long long)h[k], bar);
  }
}

static int by_cpu_desc(const void *a, const void *b) {
  const tb_thread_snap *x = a, *y = b;
  return x->on_cpu_ns < y->on_cpu_ns ? 1 : x->on_cpu_ns > y->on_cpu_ns ? -1 : 0;
}

static void threads(FILE *f, const tb_snapshot *d, int top) {
  tb_thread_snap *t;
  size_t n = d->nthreads;
  if (!n || top <= 0)
    return;
  t = malloc(n * sizeof *t);
  if (!t)
    return;
  memcpy(t, d->threads, n * sizeof *t);
  qsort(t, n, sizeof *t, by_cpu_desc);
  for (size_t i = 0; i < n && (int)i < top && t[i].on_cpu_ns; i++)
    fprintf(f, "    %-16s tid %-7u %9.1f ms\n", t[i].comm, t[i].tid, ms(t[i].on_cpu_ns));
  free(t);
}

void tb_human_report(FILE *f, const tb_report *r, int timestamps, int threads_top) {
  const tb_snapshot *d = r->d;
  const struct tb_counters *c = &d->c;
  unsigned on = r->s->modes_on;
  int summary = strcmp(r->type, "summary") == 0;
  char a[32], b[32];
  tb_cost cost;
  if (timestamps || summary) {
    char when[16];
    time_t now = time(NULL);
    struct tm tm;
    strftime(when, sizeof when, "%H:%M:%S", localtime_r(&now, &tm));
    fprintf(f, "%s ", when);
  }
  if (summary)
    fprintf(f, "SUMMARY over %.1f s (%s)\n", r->elapsed_s, r->end_reason ? r->end_reason : "end");
  else
    fprintf(f, "[%.1f s]\n", r->elapsed_s);
  if (on & TB_MODE_PROVIDER) {
    fprintf(f, "  TLS   handshakes %llu (resumed %llu, as client %llu)  closed %llu  errors %llu\n",
            (unsigned long long)c->handshakes, (unsigned long long)c->resumed,
            (unsigned long long)c->client_handshakes, (unsigned long long)c->closes,
            (unsigned long long)c->errors);
    fprintf(f, "        bytes in %s out %s  records in %llu out %llu  JNI calls %llu\n",
            sz(c->bytes_in, a, sizeof a), sz(c->bytes_out, b, sizeof b),
            (unsigned long long)c->records_in, (unsigned long long)c->records_out,
            (unsigned long long)c->jni_calls);
    fprintf(f, "        in SSL_read %.1f ms  SSL_write %.1f ms  handshake %.1f ms (closed conns)\n",
            ms(c->ns_read), ms(c->ns_write), ms(c->ns_handshake));
    for (int i = 0; summary && i < d->nprotocols; i++)
      fprintf(f, "        %-8s %llu\n", tb_proto_name(d->protocols[i].key),
              (unsigned long long)d->protocols[i].count);
    for (int i = 0; summary && i < d->nsuites; i++)
      fprintf(f, "        %-32s %llu\n", d->suites[i].name, (unsigned long long)d->suites[i].count);
    for (int i = 0; summary && i < d->ngroups; i++)
      fprintf(f, "        group %-26s %llu\n", d->groups[i].name, (unsigned long long)d->groups[i].count);
    if (r->errors_json && r->errors_json[0] && !summary)
      fprintf(f, "        error samples: [%s]\n", r->errors_json);
  }
  if (on & TB_MODE_AGNOSTIC) {
    fprintf(f, "  JVM   on-CPU %.1f ms", ms(d->on_cpu_ns));
    if (tb_measured(r) & TB_MODE_SYSCALLS)
      fprintf(f, "  syscalls %llu  accepts %llu  connects %llu  socket/file bytes in %s out %s",
              (unsigned long long)c->syscalls, (unsigned long long)c->accepts,
              (unsigned long long)c->connects, sz(c->sys_bytes_in, a, sizeof a),
              sz(c->sys_bytes_out, b, sizeof b));
    fputc('\n', f);
    threads(f, d, summary ? (threads_top > 10 ? threads_top : 10) : threads_top);
  }
  if (on & TB_MODE_DEEP) {
    fprintf(f, "  libssl (deep, heavy):");
    for (int fn = 0; fn < TB_DEEP_FNS; fn++)
      fprintf(f, " %s %llu", tb_deep_name(fn), (unsigned long long)c->deep_calls[fn]);
    fputc('\n', f);
  }
  tb_cost_of(r, &cost);
  fprintf(f, "  probe cpu %.2f ms (self %.2f + BPF %.2f %s)  in target: %llu hits ~ %.2f ms"
             " (calibrated)  lost %llu\n",
          ms(cost.probe_cpu_ns), ms(cost.self_ns), ms(cost.bpf_ns),
          tb_bpfcost_mode_name(r->bpfcost), cost.hits, ms(cost.target_est_ns),
          (unsigned long long)c->lost_events);
  if (!summary)
    return;
  if (on & TB_MODE_PROVIDER)
    hist(f, "handshake duration", "ns", d->hs_hist);
  if (tb_measured(r) & TB_MODE_SYSCALLS)
    for (int k = 0; k < TB_IO_KINDS; k++) {
      char title[64];
      snprintf(title, sizeof title, "bytes per %s()", tb_io_name(k));
      hist(f, title, "bytes", d->io_hist[k]);
    }
  if (on & TB_MODE_DEEP)
    for (int fn = 0; fn < TB_DEEP_FNS; fn++) {
      char title[64];
      snprintf(title, sizeof title, "%s latency", tb_deep_name(fn));
      hist(f, title, "ns", d->deep_hist[fn * 2]);
      snprintf(title, sizeof title, "%s bytes", tb_deep_name(fn));
      hist(f, title, "bytes", d->deep_hist[fn * 2 + 1]);
    }
}
