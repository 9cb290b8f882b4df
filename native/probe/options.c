/* Parses the command line. Errors name the offending option and value so a
 * script's mistake is obvious from the message alone. */
#include "options.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char USAGE[] =
    "Usage: tlsbridge-probe -p PID [options]\n"
    "Watch a JVM's TLS from outside, with BPF. Needs root and a kernel with BTF.\n"
    "\n"
    "  -p, --pid PID           process to watch (required)\n"
    "  -d, --duration SECONDS  stop after this long (default: until Ctrl-C/SIGTERM)\n"
    "  -i, --interval SECONDS  print every INTERVAL seconds (default 1; 0 = summary only)\n"
    "  -m, --mode LIST         comma list of provider, agnostic, deep (default provider,agnostic)\n"
    "                          provider: USDT probes in libtlsbridge (0-2 hits per request)\n"
    "                          agnostic: any JVM: on-CPU per thread, syscalls, bytes per I/O call\n"
    "                          deep:     uprobes on libssl SSL_read/SSL_write/_ex, SSL_do_handshake\n"
    "                                    (HEAVY: ~20-30 us per call on this kind of kernel)\n"
    "  -T, --timestamp         prefix human output with the time of day\n"
    "  -j, --json              one JSON object per line: meta, interval..., summary\n"
    "      --summary-only      print no intervals, only the final summary\n"
    "      --prometheus FILE   rewrite FILE with OpenMetrics text every interval\n"
    "      --prometheus-port N serve OpenMetrics on http://127.0.0.1:N/metrics\n"
    "      --prometheus-bind A address for --prometheus-port (default 127.0.0.1)\n"
    "      --lib PATH          libtlsbridge to probe (default: found in /proc/PID/maps)\n"
    "      --threads N         threads listed per interval in human output (default 5)\n"
    "      --any-process       allow a target that is not a JVM\n"
    "      --no-syscalls       agnostic mode without syscall counts and I/O sizes: the\n"
    "                          syscall tracepoint runs for every process on the machine\n"
    "      --no-calibrate      skip the per-hit cost calibration at start\n"
    "      --bpf-stats MODE    BPF run-time accounting: sampled (default: 250 ms every 5 s),\n"
    "                          always (exact, adds ~25 ns to every program run), off\n"
    "  -v, --verbose           libbpf debug messages\n"
    "  -h, --help              this text\n";

static int parse_num(const char *opt, const char *s, double lo, double hi, double *out) {
  char *end;
  double v = strtod(s, &end);
  if (!*s || *end || v < lo || v > hi) {
    fprintf(stderr, "tlsbridge-probe: %s: '%s' is not a number in [%.0f, %.0f]\n", opt, s, lo, hi);
    return -1;
  }
  *out = v;
  return 0;
}

static int parse_int(const char *opt, const char *s, int lo, int hi, int *out) {
  double v;
  if (parse_num(opt, s, lo, hi, &v))
    return -1;
  *out = (int)v;
  return 0;
}

static int parse_modes(const char *s, unsigned *out) {
  char buf[128], *tok, *save = NULL;
  unsigned m = 0;
  if (strlen(s) >= sizeof buf) {
    fprintf(stderr, "tlsbridge-probe: --mode: list too long\n");
    return -1;
  }
  strcpy(buf, s);
  for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if (strcmp(tok, "provider") == 0)
      m |= TB_MODE_PROVIDER;
    else if (strcmp(tok, "agnostic") == 0)
      m |= TB_MODE_AGNOSTIC;
    else if (strcmp(tok, "deep") == 0)
      m |= TB_MODE_DEEP;
    else if (strcmp(tok, "all") == 0)
      m |= TB_MODE_PROVIDER | TB_MODE_AGNOSTIC | TB_MODE_DEEP;
    else {
      fprintf(stderr, "tlsbridge-probe: --mode: unknown mode '%s' (provider, agnostic, deep)\n", tok);
      return -1;
    }
  }
  if (!m) {
    fprintf(stderr, "tlsbridge-probe: --mode: empty list\n");
    return -1;
  }
  *out |= m;
  return 0;
}

const char *tb_modes_str(unsigned m) {
  static char buf[64];
  buf[0] = 0;
  if (m & TB_MODE_PROVIDER)
    strcat(buf, "provider,");
  if (m & TB_MODE_AGNOSTIC)
    strcat(buf, "agnostic,");
  if (m & TB_MODE_DEEP)
    strcat(buf, "deep,");
  if (buf[0])
    buf[strlen(buf) - 1] = 0;
  return buf;
}

enum { O_PROM = 256, O_PROM_PORT, O_PROM_BIND, O_LIB, O_THREADS, O_ANY, O_NOCAL, O_SUMMARY, O_STATS,
       O_NOSYS };

int tb_parse_options(int argc, char **argv, tb_opts *o) {
  static const struct option longs[] = {
      {"pid", required_argument, 0, 'p'},       {"duration", required_argument, 0, 'd'},
      {"interval", required_argument, 0, 'i'},  {"mode", required_argument, 0, 'm'},
      {"timestamp", no_argument, 0, 'T'},       {"json", no_argument, 0, 'j'},
      {"verbose", no_argument, 0, 'v'},         {"help", no_argument, 0, 'h'},
      {"prometheus", required_argument, 0, O_PROM},
      {"prometheus-port", required_argument, 0, O_PROM_PORT},
      {"prometheus-bind", required_argument, 0, O_PROM_BIND},
      {"lib", required_argument, 0, O_LIB},     {"threads", required_argument, 0, O_THREADS},
      {"any-process", no_argument, 0, O_ANY},   {"no-calibrate", no_argument, 0, O_NOCAL},
      {"summary-only", no_argument, 0, O_SUMMARY},
      {"bpf-stats", required_argument, 0, O_STATS},
      {"no-syscalls", no_argument, 0, O_NOSYS},
      {0, 0, 0, 0}};
  int c;
  memset(o, 0, sizeof *o);
  o->pid = -1;
  o->interval_s = 1;
  o->prom_bind = "127.0.0.1";
  o->threads_top = 5;
  while ((c = getopt_long(argc, argv, "p:d:i:m:Tjvh", longs, NULL)) != -1) {
    switch (c) {
    case 'p':
      if (parse_int("-p", optarg, 1, 2147483647, &o->pid))
        return -1;
      break;
    case 'd':
      if (parse_num("-d", optarg, 0, 31536000, &o->duration_s))
        return -1;
      break;
    case 'i':
      if (parse_num("-i", optarg, 0, 86400, &o->interval_s))
        return -1;
      break;
    case 'm':
      if (parse_modes(optarg, &o->modes))
        return -1;
      break;
    case 'T': o->timestamps = 1; break;
    case 'j': o->json = 1; break;
    case 'v': o->verbose = 1; break;
    case 'h': fputs(USAGE, stdout); return 1;
    case O_PROM: o->prom_file = optarg; break;
    case O_PROM_PORT:
      if (parse_int("--prometheus-port", optarg, 1, 65535, &o->prom_port))
        return -1;
      break;
    case O_PROM_BIND: o->prom_bind = optarg; break;
    case O_LIB: o->lib_path = optarg; break;
    case O_THREADS:
      if (parse_int("--threads", optarg, 0, 1000, &o->threads_top))
        return -1;
      break;
    case O_ANY: o->any_process = 1; break;
    case O_NOCAL: o->no_calibrate = 1; break;
    case O_SUMMARY: o->quiet_intervals = 1; break;
    case O_NOSYS: o->no_syscalls = 1; break;
    case O_STATS:
      if (strcmp(optarg, "sampled") == 0)
        o->bpf_stats = 0;
      else if (strcmp(optarg, "always") == 0)
        o->bpf_stats = 1;
      else if (strcmp(optarg, "off") == 0)
        o->bpf_stats = 2;
      else {
        fprintf(stderr, "tlsbridge-probe: --bpf-stats: '%s' is not sampled, always or off\n", optarg);
        return -1;
      }
      break;
    default:
      fputs(USAGE, stderr);
      return -1;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "tlsbridge-probe: unexpected argument '%s'\n", argv[optind]);
    return -1;
  }
  if (o->pid < 0) {
    fprintf(stderr, "tlsbridge-probe: -p PID is required (try --help)\n");
    return -1;
  }
  if (!o->modes)
    o->modes = TB_MODE_PROVIDER | TB_MODE_AGNOSTIC;
  return 0;
}
