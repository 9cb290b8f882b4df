/* tlsbridge-probe: checks the target, loads and attaches the BPF side, then
 * prints one report per interval and a summary at the end (-d, Ctrl-C,
 * SIGTERM or the target exiting). Each failure at start names its cause and
 * exits non-zero. */
#include "attach.h"
#include "calibrate.h"
#include "meta.h"
#include "output.h"
#include "probe.skel.h"
#include "prom_sink.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig) { stop_signal = sig; }

static int verbose;
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap) {
  if (level == LIBBPF_DEBUG && !verbose)
    return 0;
  return vfprintf(stderr, fmt, ap);
}

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...) {
  va_list ap;
  fputs("tlsbridge-probe: ", stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  return 1;
}

/* Error events from the ring buffer, kept as JSON for the next report. */
typedef struct errbuf {
  char json[4096];
  size_t len;
  int count;
} errbuf;

static int on_error_event(void *ctx, void *data, size_t size) {
  errbuf *eb = ctx;
  const struct tb_error_event *ev = data;
  FILE *f;
  char item[1280]; /* a 160-byte message escapes to at most 960 */
  if (size < sizeof *ev || eb->count >= 8)
    return 0;
  f = fmemopen(item, sizeof item, "w");
  if (!f)
    return 0;
  fprintf(f, "%s{\"tid\":%u,\"kind\":%llu,\"code\":%llu,\"message\":", eb->count ? "," : "", ev->tid,
          (unsigned long long)ev->kind, (unsigned long long)ev->code);
  tb_json_str(f, ev->msg);
  fputc('}', f);
  fputc(0, f);
  fclose(f);
  item[sizeof item - 1] = 0;
  if (eb->len + strlen(item) < sizeof eb->json) {
    memcpy(eb->json + eb->len, item, strlen(item) + 1);
    eb->len += strlen(item);
    eb->count++;
  }
  return 0;
}

/* Checks what the target is and which modes can start now. */
static int check_target(tb_session *s, const tb_opts *o) {
  char comm[32];
  int r = tb_pid_exists(o->pid);
  if (r == 0)
    return fail("no such process: PID %d", o->pid);
  if (r < 0)
    return fail("cannot look at PID %d: %s", o->pid, strerror(errno));
  tb_pid_comm(o->pid, comm, sizeof comm);
  r = tb_tgid_of(o->pid);
  if (r > 0 && r != o->pid)
    return fail("%d is a thread of process %d: use -p %d", o->pid, r, r);
  s->is_jvm = tb_is_jvm(o->pid, &s->jvm);
  s->have_lib = o->lib_path || tb_find_mapping(o->pid, "libtlsbridge", &s->lib) == 1;
  s->have_libssl = tb_find_mapping(o->pid, "libssl.so", &s->libssl) == 1;
  s->have_libcrypto = tb_find_mapping(o->pid, "libcrypto.so", &s->libcrypto) == 1;
  if (!s->is_jvm && !s->have_lib && !o->any_process)
    return fail("PID %d (%s) is not a JVM (no libjvm.so mapped) and has no libtlsbridge loaded; "
                "--any-process watches it anyway", o->pid, comm);
  if ((o->modes & TB_MODE_PROVIDER) && !s->have_lib) {
    if (o->modes == TB_MODE_PROVIDER)
      return fail("libtlsbridge is not loaded in PID %d (%s): this %s does not use the tlsbridge "
                  "provider (yet); --mode agnostic works with any JVM", o->pid, comm,
                  s->is_jvm ? "JVM" : "process");
    fprintf(stderr, "tlsbridge-probe: libtlsbridge is not loaded in PID %d yet; provider mode "
                    "attaches when it appears, the other modes run now\n", o->pid);
  }
  if ((o->modes & TB_MODE_DEEP) && !s->have_libssl) {
    if (o->modes == TB_MODE_DEEP)
      return fail("libssl is not loaded in PID %d (%s): nothing for deep mode to probe", o->pid, comm);
    fprintf(stderr, "tlsbridge-probe: libssl is not loaded in PID %d; deep mode off\n", o->pid);
  }
  return 0;
}

static int attach_all(tb_session *s, const tb_opts *o) {
  if ((o->modes & TB_MODE_AGNOSTIC) && tb_attach_agnostic(s))
    return 1;
  if ((o->modes & TB_MODE_PROVIDER) && s->have_lib && tb_attach_provider(s) != 0)
    return 1;
  if ((o->modes & TB_MODE_DEEP) && s->have_libssl && tb_attach_deep(s) < 0)
    return 1;
  return 0;
}

typedef struct loop {
  tb_session *s;
  const tb_opts *o;
  tb_meta meta;
  tb_calib cal;
  tb_snapshot base, prev;
  tb_bpfcost cost;
  errbuf errs;
  char *prom_text;
  size_t prom_len;
  int prom_fd;
} loop;

static void report(loop *L, const char *type, const tb_snapshot *cur, const tb_snapshot *from,
                   const char *end) {
  tb_snapshot d;
  tb_report r = {type, &d, 0, L->s, &L->cal, &L->meta, L->errs.json, end, &L->cost};
  FILE *f = stdout;
  if (tb_snapshot_diff(cur, from, &d))
    return;
  r.elapsed_s = (double)d.mono_ns / 1e9;
  if (L->o->json)
    tb_json_report(f, &r);
  else
    tb_human_report(f, &r, L->o->timestamps, L->o->threads_top);
  fflush(f);
  tb_snapshot_free(&d);
}

/* OpenMetrics always carries the totals since attach. */
static void refresh_prom(loop *L, const tb_snapshot *cur) {
  tb_snapshot d;
  tb_report r = {"summary", &d, 0, L->s, &L->cal, &L->meta, NULL, NULL, &L->cost};
  FILE *f;
  if (!L->o->prom_file && L->prom_fd < 0)
    return;
  if (tb_snapshot_diff(cur, &L->base, &d))
    return;
  free(L->prom_text);
  L->prom_text = NULL;
  f = open_memstream(&L->prom_text, &L->prom_len);
  if (f) {
    tb_prom_report(f, &r);
    fclose(f);
  }
  tb_snapshot_free(&d);
  if (L->o->prom_file && L->prom_text &&
      tb_prom_write_file(L->o->prom_file, L->prom_text, L->prom_len))
    fprintf(stderr, "tlsbridge-probe: cannot write %s: %s\n", L->o->prom_file, strerror(errno));
}

static const char *run(loop *L, struct ring_buffer *rb) {
  const tb_opts *o = L->o;
  uint64_t start = L->base.mono_ns;
  uint64_t tick = (uint64_t)((o->interval_s > 0 ? o->interval_s : 1.0) * 1e9);
  uint64_t next = start + tick, end = o->duration_s > 0 ? start + (uint64_t)(o->duration_s * 1e9) : 0;
  for (;;) {
    struct pollfd pf[2];
    int n = 0, timeout;
    uint64_t now = tb_mono_ns(), deadline = next;
    if (stop_signal)
      return stop_signal == SIGTERM ? "SIGTERM" : "SIGINT";
    if (end && end < deadline)
      deadline = end;
    {
      uint64_t t = tb_bpfcost_tick(&L->cost, L->s, now);
      if (t < deadline)
        deadline = t;
    }
    if (end && now >= end)
      return "duration";
    if (now >= next) {
      tb_snapshot cur;
      if (tb_pid_exists(o->pid) == 0)
        return "target exited";
      if ((o->modes & TB_MODE_PROVIDER) && !(L->s->modes_on & TB_MODE_PROVIDER) &&
          tb_attach_provider(L->s) == 0)
        fprintf(stderr, "tlsbridge-probe: libtlsbridge appeared (%s): provider mode attached\n",
                L->s->lib.shown);
      ring_buffer__consume(rb);
      /* with no intervals to print and no OpenMetrics to refresh, only the
       * final summary reads the maps */
      if ((o->interval_s > 0 && !o->quiet_intervals) || o->prom_file || L->prom_fd >= 0) {
        if (tb_snapshot_take(L->s, &L->cost, &cur) == 0) {
          if (o->interval_s > 0 && !o->quiet_intervals)
            report(L, "interval", &cur, &L->prev, NULL);
          refresh_prom(L, &cur);
          tb_snapshot_free(&L->prev);
          L->prev = cur;
        }
      }
      L->errs.len = 0;
      L->errs.json[0] = 0;
      L->errs.count = 0;
      while (next <= now)
        next += tick;
      continue;
    }
    timeout = (int)((deadline - now) / 1000000) + 1;
    if (timeout > 1000)
      timeout = 1000;
    pf[n++] = (struct pollfd){.fd = ring_buffer__epoll_fd(rb), .events = POLLIN};
    if (L->prom_fd >= 0)
      pf[n++] = (struct pollfd){.fd = L->prom_fd, .events = POLLIN};
    if (poll(pf, (nfds_t)n, timeout) > 0) {
      if (pf[0].revents)
        ring_buffer__consume(rb);
      if (n > 1 && pf[1].revents && L->prom_text)
        tb_prom_serve(L->prom_fd, L->prom_text, L->prom_len);
    }
    if (tb_pid_exists(L->o->pid) == 0)
      return "target exited";
  }
}

int main(int argc, char **argv) {
  static tb_session s;
  static loop L;
  tb_opts o;
  struct ring_buffer *rb = NULL;
  struct sigaction sa;
  const char *why;
  int rc = tb_parse_options(argc, argv, &o);
  tb_snapshot last;
  if (rc)
    return rc > 0 ? 0 : 2;
  verbose = o.verbose;
  setvbuf(stdout, NULL, _IOLBF, 0);
  libbpf_set_print(libbpf_print);
  if (geteuid() != 0)
    return fail("must run as root: BPF programs, uprobes and /proc/PID/map_files need it");
  if (access("/sys/kernel/btf/vmlinux", R_OK) != 0)
    return fail("this kernel exposes no BTF (/sys/kernel/btf/vmlinux): CO-RE programs cannot "
                "load; a kernel built with CONFIG_DEBUG_INFO_BTF=y is needed");
  if (check_target(&s, &o))
    return 1;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  L.s = &s;
  L.o = &o;
  L.prom_fd = -1;
  if (tb_session_load(&s, &o) || attach_all(&s, &o)) {
    tb_session_close(&s);
    return 1;
  }
  if (!o.no_calibrate && tb_calibrate(&s, &L.cal)) {
    tb_session_close(&s);
    return 1;
  }
  /* accounting starts after calibration so the per-hit figure is that of
   * the configuration that then runs */
  tb_bpfcost_init(&L.cost, o.bpf_stats);
  tb_bpfcost_tick(&L.cost, &s, tb_mono_ns());
  rb = ring_buffer__new(bpf_map__fd(s.skel->maps.error_events), on_error_event, &L.errs, NULL);
  if (!rb) {
    tb_session_close(&s);
    return fail("cannot open the error ring buffer: %s", strerror(errno));
  }
  if (o.prom_port && (L.prom_fd = tb_prom_listen(o.prom_bind, o.prom_port)) < 0) {
    ring_buffer__free(rb);
    tb_session_close(&s);
    return 1;
  }
  tb_meta_collect(&L.meta, &s);
  if (tb_snapshot_take(&s, &L.cost, &L.base) || tb_snapshot_diff(&L.base, NULL, &L.prev)) {
    ring_buffer__free(rb);
    tb_session_close(&s);
    return fail("cannot read the BPF maps");
  }
  {
    tb_report r = {"meta", &L.base, 0, &s, &L.cal, &L.meta, NULL, NULL, &L.cost};
    if (o.json)
      tb_json_meta(stdout, &r);
    else
      tb_human_meta(stdout, &r);
    fflush(stdout);
  }
  refresh_prom(&L, &L.base);
  why = run(&L, rb);
  ring_buffer__consume(rb);
  tb_bpfcost_flush(&L.cost, &s);
  if (tb_snapshot_take(&s, &L.cost, &last) == 0) {
    report(&L, "summary", &last, &L.base, why);
    refresh_prom(&L, &last);
    tb_snapshot_free(&last);
  }
  ring_buffer__free(rb);
  tb_bpfcost_close(&L.cost);
  if (L.prom_fd >= 0)
    close(L.prom_fd);
  free(L.prom_text);
  tb_snapshot_free(&L.base);
  tb_snapshot_free(&L.prev);
  tb_session_close(&s);
  return 0;
}
