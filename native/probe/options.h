/* Command line of tlsbridge-probe, in bcc's conventions. */
#ifndef TB_PROBE_OPTIONS_H
#define TB_PROBE_OPTIONS_H

#define TB_MODE_PROVIDER 0x1u
#define TB_MODE_AGNOSTIC 0x2u
#define TB_MODE_DEEP 0x4u
/* Not a mode of its own: what agnostic's syscall program measures (off
 * with --no-syscalls). */
#define TB_MODE_SYSCALLS 0x8u

typedef struct tb_opts {
  int pid;
  double duration_s;     /* 0: until Ctrl-C / SIGTERM / target exit */
  double interval_s;     /* 0: summary only */
  unsigned modes;
  int timestamps;        /* -T */
  int json;
  int quiet_intervals;   /* --summary-only */
  const char *prom_file;
  int prom_port;         /* 0: off */
  const char *prom_bind;
  const char *lib_path;  /* --lib: libtlsbridge path, skipping /proc discovery */
  int threads_top;       /* threads shown per interval in human output */
  int no_calibrate;
  int verbose;           /* libbpf debug output */
  int any_process;       /* allow a non-JVM target in agnostic/deep mode */
  int bpf_stats;         /* enum tb_bpfcost_mode */
  int no_syscalls;       /* agnostic without the syscall tracepoint */
} tb_opts;

/* 0 ok, 1 help printed (exit 0), -1 error printed (exit 2). */
int tb_parse_options(int argc, char **argv, tb_opts *o);
/* "provider,agnostic" style list of the modes in m. */
const char *tb_modes_str(unsigned m);
#endif
