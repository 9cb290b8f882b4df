/* Fires a known number of hits at tlsbridge_probe:calibrate in a helper
 * thread, bare and then with a BPF program attached, and times both with
 * the thread's CPU clock (uprobe handling runs in the hitting thread, so it
 * is charged there and preemption by other work does not inflate it). The
 * site is built by the same tb_usdt.h as libtlsbridge's, so it is the same
 * 5-byte nop the kernel optimises. */
#include "calibrate.h"
#include "probe.h"
#include "probe.skel.h"
#include "snapshot.h"
#include "tb_usdt.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>

TB_USDT_SEMAPHORE(tlsbridge_probe, calibrate);

#define CALIB_HITS 4000
#define CALIB_ROUNDS 3

static __attribute__((noinline)) void fire(unsigned long n) {
  for (unsigned long i = 0; i < n; i++)
    TB_USDT1(tlsbridge_probe, calibrate, i);
}

/* A function whose first instruction is "sub $imm, %rsp", like libssl's
 * SSL_read/SSL_write here: the kind of entry a uprobe must single-step,
 * which is what deep mode pays per call. */
__asm__(".text\n"
        ".globl tb_probe_calib_fn\n"
        ".type tb_probe_calib_fn, @function\n"
        "tb_probe_calib_fn:\n"
        "  sub $0x18, %rsp\n"
        "  add $0x18, %rsp\n"
        "  ret\n"
        ".size tb_probe_calib_fn, .-tb_probe_calib_fn\n");
void tb_probe_calib_fn(void);

#define DEEP_CALLS 1000

static uint64_t thread_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static double timed(unsigned long n) {
  uint64_t t0 = thread_ns();
  fire(n);
  return (double)(thread_ns() - t0) / (double)n;
}

static double timed_calls(unsigned long n) {
  uint64_t t0 = thread_ns();
  for (unsigned long i = 0; i < n; i++)
    tb_probe_calib_fn();
  return (double)(thread_ns() - t0) / (double)n;
}

/* Deep mode's per-call cost, measured with its own programs (the cookie
 * names no libssl function, so nothing is counted). */
static void calibrate_deep(tb_session *s, tb_calib *c) {
  LIBBPF_OPTS(bpf_uprobe_opts, in, .func_name = "tb_probe_calib_fn", .bpf_cookie = 7);
  LIBBPF_OPTS(bpf_uprobe_opts, out, .func_name = "tb_probe_calib_fn", .retprobe = 1, .bpf_cookie = 7);
  struct bpf_link *a, *b;
  double bare, hot;
  if (bpf_program__fd(s->skel->progs.on_ssl_enter) < 0)
    return;
  bare = timed_calls(DEEP_CALLS);
  a = bpf_program__attach_uprobe_opts(s->skel->progs.on_ssl_enter, getpid(), "/proc/self/exe", 0, &in);
  b = bpf_program__attach_uprobe_opts(s->skel->progs.on_ssl_exit, getpid(), "/proc/self/exe", 0, &out);
  if (a && b) {
    hot = timed_calls(DEEP_CALLS);
    c->deep_per_call_ns = hot > bare ? hot - bare : 0;
  } else {
    fprintf(stderr, "tlsbridge-probe: calibration: deep mode's per-call cost not measured: %s\n",
            strerror(errno));
  }
  bpf_link__destroy(a);
  bpf_link__destroy(b);
}

typedef struct job {
  tb_session *s;
  tb_calib *c;
  int rc;
} job;

static void *run(void *arg) {
  job *j = arg;
  struct bpf_link *l;
  struct tb_counters before, after;
  double bare = 1e30, hot = 1e30;
  int i;
  for (i = 0; i < CALIB_ROUNDS; i++) {
    double v = timed(CALIB_HITS);
    bare = v < bare ? v : bare;
  }
  l = bpf_program__attach_usdt(j->s->skel->progs.on_calibrate, getpid(), "/proc/self/exe",
                               "tlsbridge_probe", "calibrate", NULL);
  if (!l) {
    fprintf(stderr, "tlsbridge-probe: calibration: cannot attach to our own probe site: %s\n",
            strerror(errno));
    j->rc = -1;
    return NULL;
  }
  tb_read_counters(j->s, &before);
  for (i = 0; i < CALIB_ROUNDS; i++) {
    double v = timed(CALIB_HITS);
    hot = v < hot ? v : hot;
  }
  tb_read_counters(j->s, &after);
  bpf_link__destroy(l);
  j->c->fired = (unsigned long)CALIB_HITS * CALIB_ROUNDS;
  j->c->hits = (unsigned long)(after.calib_hits - before.calib_hits);
  j->c->bare_ns = bare;
  j->c->per_hit_ns = hot > bare ? hot - bare : 0;
  j->c->done = 1;
  calibrate_deep(j->s, j->c);
  if (j->c->hits != j->c->fired) {
    fprintf(stderr, "tlsbridge-probe: calibration: fired %lu hits, BPF saw %lu: USDT probes do "
                    "not work on this kernel\n", j->c->fired, j->c->hits);
    j->rc = -1;
  }
  return NULL;
}

int tb_calibrate(tb_session *s, tb_calib *c) {
  pthread_t t;
  job j = {s, c, 0};
  memset(c, 0, sizeof *c);
  if (!s->skel->progs.on_calibrate)
    return -1;
  if (pthread_create(&t, NULL, run, &j)) {
    fprintf(stderr, "tlsbridge-probe: calibration: cannot start its thread\n");
    return -1;
  }
  pthread_join(t, NULL);
  return j.rc;
}
