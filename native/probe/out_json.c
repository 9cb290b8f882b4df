/* JSON lines. Field names are an interface: scripts rely on type,
 * handshakes, resumed, bytes_in, bytes_out, records_in, records_out,
 * errors, on_cpu_ns, threads, syscalls, probe_cpu_ns and lost_events, so
 * they are only ever added to, never renamed. */
#include "output.h"

#include <string.h>
#include <sys/utsname.h>
#include <time.h>

static void hist_sep(FILE *f, const char *sep, const char *name, const __u64 *h) {
  int first = 1;
  fprintf(f, "%s\"%s\":[", sep, name);
  for (int k = 0; k < TB_HIST_SLOTS; k++) {
    unsigned long long lo, hi;
    if (!h[k])
      continue;
    tb_slot_bounds(k, &lo, &hi);
    fprintf(f, "%s{\"lo\":%llu,\"hi\":%llu,\"count\":%llu}", first ? "" : ",", lo, hi,
            (unsigned long long)h[k]);
    first = 0;
  }
  fputc(']', f);
}

static void hist(FILE *f, const char *name, const __u64 *h) { hist_sep(f, ",", name, h); }

static void u64(FILE *f, const char *name, unsigned long long v) {
  fprintf(f, ",\"%s\":%llu", name, v);
}

static void fields(FILE *f, const struct tb_counters *c, unsigned mode) {
  for (int i = 0; i < tb_nfields; i++)
    if (tb_fields[i].mode == mode)
      u64(f, tb_fields[i].json, tb_field_value(&tb_fields[i], c));
}

static void modes(FILE *f, const char *name, unsigned m) {
  static const char *const n[] = {"provider", "agnostic", "deep"};
  int first = 1;
  fprintf(f, ",\"%s\":[", name);
  for (int i = 0; i < 3; i++)
    if (m & (1u << i)) {
      fprintf(f, "%s\"%s\"", first ? "" : ",", n[i]);
      first = 0;
    }
  fputc(']', f);
}

static void lib(FILE *f, const char *name, const tb_mapped *m, int have) {
  fprintf(f, ",\"%s\":", name);
  if (!have) {
    fputs("null", f);
    return;
  }
  fputs("{\"path\":", f);
  tb_json_str(f, m->shown);
  fprintf(f, ",\"deleted\":%s,\"opened_as\":", m->deleted ? "true" : "false");
  tb_json_str(f, m->open_path);
  fputc('}', f);
}

void tb_json_meta(FILE *f, const tb_report *r) {
  const tb_session *s = r->s;
  fprintf(f, "{\"type\":\"meta\",\"version\":1,\"pid\":%d,\"comm\":", s->opts->pid);
  tb_json_str(f, r->meta->comm);
  fprintf(f, ",\"jvm\":%s", s->is_jvm ? "true" : "false");
  modes(f, "modes", s->modes_on);
  modes(f, "modes_requested", s->opts->modes);
  fputs(",\"kernel\":", f);
  tb_json_str(f, r->meta->kernel);
  fputs(",\"libbpf\":", f);
  tb_json_str(f, r->meta->libbpf);
  fputs(",\"jdk\":", f);
  tb_json_str(f, r->meta->jdk);
  fputs(",\"openssl\":", f);
  if (r->meta->openssl[0])
    tb_json_str(f, r->meta->openssl);
  else
    fputs("null", f); /* no libcrypto mapped: SunJSSE, or not loaded yet */
  lib(f, "library", &s->lib, s->have_lib);
  lib(f, "libssl", &s->libssl, s->have_libssl);
  fprintf(f, ",\"interval_s\":%g,\"bpf_stats\":\"%s\"", s->opts->interval_s,
          tb_bpfcost_mode_name(r->bpfcost));
  if (r->cal && r->cal->done)
    fprintf(f, ",\"calibration\":{\"per_hit_ns\":%.0f,\"bare_ns\":%.1f,\"hits\":%lu,"
               "\"deep_per_call_ns\":%.0f}",
            r->cal->per_hit_ns, r->cal->bare_ns, r->cal->hits, r->cal->deep_per_call_ns);
  else
    fputs(",\"calibration\":null", f);
  fputs("}\n", f);
}

/* ,"key":{"name":count,...} */
static void named(FILE *f, const char *key, const tb_keyed *k, int n) {
  fprintf(f, ",\"%s\":{", key);
  for (int i = 0; i < n; i++) {
    fputs(i ? "," : "", f);
    tb_json_str(f, k[i].name);
    fprintf(f, ":%llu", (unsigned long long)k[i].count);
  }
  fputs("}", f);
}

static void provider(FILE *f, const tb_report *r) {
  const tb_snapshot *d = r->d;
  const struct tb_counters *c = &d->c;
  fields(f, c, TB_MODE_PROVIDER);
  fputs(",\"bytes_source\":\"library\"", f);
  hist(f, "handshake_ns", d->hs_hist);
  fputs(",\"protocols\":{", f);
  for (int i = 0; i < d->nprotocols; i++)
    fprintf(f, "%s\"%s\":%llu", i ? "," : "", tb_proto_name(d->protocols[i].key),
            (unsigned long long)d->protocols[i].count);
  fputs("}", f);
  named(f, "suites", d->suites, d->nsuites);
  named(f, "groups", d->groups, d->ngroups);
  fprintf(f, ",\"error_samples\":[%s]", r->errors_json ? r->errors_json : "");
}

static void agnostic(FILE *f, const tb_report *r) {
  const tb_snapshot *d = r->d;
  const struct tb_counters *c = &d->c;
  int first = 1;
  u64(f, "on_cpu_ns", d->on_cpu_ns);
  fputs(",\"threads\":[", f);
  for (size_t i = 0; i < d->nthreads; i++) {
    if (!d->threads[i].on_cpu_ns)
      continue;
    fprintf(f, "%s{\"tid\":%u,\"name\":", first ? "" : ",", d->threads[i].tid);
    tb_json_str(f, d->threads[i].comm);
    fprintf(f, ",\"on_cpu_ns\":%llu}", (unsigned long long)d->threads[i].on_cpu_ns);
    first = 0;
  }
  fputc(']', f);
  fields(f, c, TB_MODE_AGNOSTIC);
}

static void syscalls(FILE *f, const tb_report *r) {
  const tb_snapshot *d = r->d;
  const struct tb_counters *c = &d->c;
  int first = 1;
  if (!tb_has_provider(r)) {
    u64(f, "bytes_in", c->sys_bytes_in);
    u64(f, "bytes_out", c->sys_bytes_out);
    fputs(",\"bytes_source\":\"syscalls\"", f);
  }
  fputs(",\"syscalls_by_name\":{", f);
  for (unsigned i = 0; i < TB_MAX_SYSCALL; i++) {
    if (!d->syscalls[i])
      continue;
    fprintf(f, "%s\"%s\":%llu", first ? "" : ",", tb_syscall_name(i),
            (unsigned long long)d->syscalls[i]);
    first = 0;
  }
  fputc('}', f);
  fields(f, c, TB_MODE_SYSCALLS);
  fputs(",\"io_bytes\":{", f);
  first = 1;
  for (int k = 0; k < TB_IO_KINDS; k++)
    if (!tb_hist_empty(d->io_hist[k])) {
      hist_sep(f, first ? "" : ",", tb_io_name(k), d->io_hist[k]);
      first = 0;
    }
  fputc('}', f);
}

static void deep(FILE *f, const tb_report *r) {
  const tb_snapshot *d = r->d;
  fputs(",\"deep\":{\"heavy\":true", f);
  for (int fn = 0; fn < TB_DEEP_FNS; fn++) {
    fprintf(f, ",\"%s\":{\"calls\":%llu", tb_deep_name(fn), (unsigned long long)d->c.deep_calls[fn]);
    hist(f, "ns", d->deep_hist[fn * 2]);
    if (fn != TB_DEEP_SSL_DO_HANDSHAKE)
      hist(f, "bytes", d->deep_hist[fn * 2 + 1]);
    fputc('}', f);
  }
  fputc('}', f);
}

void tb_json_report(FILE *f, const tb_report *r) {
  unsigned on = r->s->modes_on;
  char when[32];
  time_t now = time(NULL);
  struct tm tm;
  tb_cost cost;
  strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S%z", localtime_r(&now, &tm));
  fprintf(f, "{\"type\":\"%s\",\"time\":\"%s\",\"elapsed_s\":%.3f,\"pid\":%d", r->type, when,
          r->elapsed_s, r->s->opts->pid);
  modes(f, "modes", on);
  if (on & TB_MODE_PROVIDER)
    provider(f, r);
  if (on & TB_MODE_AGNOSTIC)
    agnostic(f, r);
  if (tb_measured(r) & TB_MODE_SYSCALLS)
    syscalls(f, r);
  if (on & TB_MODE_DEEP)
    deep(f, r);
  tb_cost_of(r, &cost);
  u64(f, "probe_cpu_ns", cost.probe_cpu_ns);
  u64(f, "probe_self_cpu_ns", cost.self_ns);
  u64(f, "probe_bpf_ns", cost.bpf_ns);
  u64(f, "probe_hits", cost.hits);
  fprintf(f, ",\"per_hit_ns\":%.0f", cost.per_hit_ns);
  if (on & TB_MODE_DEEP)
    fprintf(f, ",\"deep_per_call_ns\":%.0f", cost.deep_per_call_ns);
  u64(f, "probe_target_est_ns", cost.target_est_ns);
  u64(f, "lost_events", r->d->c.lost_events);
  if (r->end_reason) {
    fputs(",\"end\":", f);
    tb_json_str(f, r->end_reason);
  }
  fputs("}\n", f);
}
