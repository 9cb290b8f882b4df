/* Names and arithmetic the output formats share, so human, JSON and
 * OpenMetrics always agree on what a number means. */
#include "format.h"
#include "syscall_names.h"

#include <stddef.h>
#include <string.h>

#define F(json, prom, help, member, mode) {json, prom, help, offsetof(struct tb_counters, member), mode}
const tb_field tb_fields[] = {
    F("handshakes", "handshakes", "TLS handshakes completed", handshakes, TB_MODE_PROVIDER),
    F("resumed", "resumed_handshakes", "TLS handshakes that resumed a session", resumed, TB_MODE_PROVIDER),
    F("client_handshakes", NULL, NULL, client_handshakes, TB_MODE_PROVIDER),
    F("closes", "connections_closed", "engines freed", closes, TB_MODE_PROVIDER),
    F("bytes_in", "tls_bytes_in", "TLS record bytes received (closed connections)", bytes_in,
      TB_MODE_PROVIDER),
    F("bytes_out", "tls_bytes_out", "TLS record bytes sent (closed connections)", bytes_out,
      TB_MODE_PROVIDER),
    F("records_in", "records_in", "TLS records received (closed connections)", records_in,
      TB_MODE_PROVIDER),
    F("records_out", "records_out", "TLS records sent (closed connections)", records_out,
      TB_MODE_PROVIDER),
    F("app_bytes_in", NULL, NULL, app_in, TB_MODE_PROVIDER),
    F("app_bytes_out", NULL, NULL, app_out, TB_MODE_PROVIDER),
    F("ssl_read_ns", NULL, NULL, ns_read, TB_MODE_PROVIDER),
    F("ssl_write_ns", NULL, NULL, ns_write, TB_MODE_PROVIDER),
    F("handshake_cpu_ns", NULL, NULL, ns_handshake, TB_MODE_PROVIDER),
    F("jni_calls", "jni_calls", "engine operations (JNI crossings)", jni_calls, TB_MODE_PROVIDER),
    F("errors", "errors", "engine errors", errors, TB_MODE_PROVIDER),
    F("syscalls", "syscalls", "system calls made by the target", syscalls, TB_MODE_SYSCALLS),
    F("accepts", "accepts", "accepted connections", accepts, TB_MODE_SYSCALLS),
    F("connects", "connects", "outgoing connections", connects, TB_MODE_SYSCALLS),
    F("sys_bytes_in", NULL, NULL, sys_bytes_in, TB_MODE_SYSCALLS),
    F("sys_bytes_out", NULL, NULL, sys_bytes_out, TB_MODE_SYSCALLS),
    F("context_switches_in", NULL, NULL, switches, TB_MODE_AGNOSTIC),
};
#undef F
const int tb_nfields = (int)(sizeof tb_fields / sizeof tb_fields[0]);

unsigned long long tb_field_value(const tb_field *fl, const struct tb_counters *c) {
  __u64 v;
  memcpy(&v, (const char *)c + fl->off, sizeof v);
  return v;
}

void tb_cost_of(const tb_report *r, tb_cost *out) {
  const tb_snapshot *d = r->d;
  memset(out, 0, sizeof *out);
  out->self_ns = d->self_cpu_ns;
  out->bpf_ns = d->bpf_run_ns;
  out->probe_cpu_ns = out->self_ns + out->bpf_ns;
  out->hits = d->c.usdt_hits + d->c.deep_hits;
  if (r->cal && r->cal->done) {
    out->per_hit_ns = r->cal->per_hit_ns;
    out->deep_per_call_ns = r->cal->deep_per_call_ns;
    out->target_est_ns = (unsigned long long)((double)d->c.usdt_hits * r->cal->per_hit_ns +
                                              (double)(d->c.deep_hits / 2) * r->cal->deep_per_call_ns);
  }
}

const char *tb_proto_name(unsigned v) {
  switch (v) {
  case 0x0304: return "TLSv1.3";
  case 0x0303: return "TLSv1.2";
  case 0x0302: return "TLSv1.1";
  case 0x0301: return "TLSv1";
  case 0xfefd: return "DTLSv1.2";
  default: return "other";
  }
}

const char *tb_io_name(int kind) {
  static const char *const n[TB_IO_KINDS] = {"read", "write", "recvmsg", "sendmsg",
                                             "recvfrom", "sendto", "readv", "writev"};
  return kind >= 0 && kind < TB_IO_KINDS ? n[kind] : "?";
}

const char *tb_deep_name(int fn) {
  static const char *const n[TB_DEEP_FNS] = {"SSL_read", "SSL_write", "SSL_read_ex",
                                             "SSL_write_ex", "SSL_do_handshake"};
  return fn >= 0 && fn < TB_DEEP_FNS ? n[fn] : "?";
}

const char *tb_syscall_name(unsigned nr) {
  static char buf[24];
  if (nr < sizeof tb_syscall_names / sizeof tb_syscall_names[0] && tb_syscall_names[nr])
    return tb_syscall_names[nr];
  snprintf(buf, sizeof buf, "syscall_%u", nr);
  return buf;
}

void tb_slot_bounds(int k, unsigned long long *lo, unsigned long long *hi) {
  *lo = k == 0 ? 0 : 1ull << k;
  *hi = k >= 63 ? ~0ull : (1ull << (k + 1)) - 1;
}

int tb_hist_empty(const __u64 *h) {
  for (int k = 0; k < TB_HIST_SLOTS; k++)
    if (h[k])
      return 0;
  return 1;
}

/* Length of the valid UTF-8 sequence at s, 0 if it is not one. Thread names
 * are cut at 15 bytes by the kernel, often in the middle of a character. */
static int utf8_len(const unsigned char *s) {
  int n = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 && s[0] <= 0xdf ? 2 : 0;
  for (int i = 1; i < n; i++)
    if ((s[i] & 0xc0) != 0x80)
      return 0;
  return n;
}

void tb_json_str(FILE *f, const char *str) {
  const unsigned char *s = (const unsigned char *)str;
  fputc('"', f);
  while (*s) {
    unsigned char ch = *s;
    int n;
    if (ch == '"' || ch == '\\')
      fprintf(f, "\\%c", ch);
    else if (ch < 0x20)
      fprintf(f, "\\u%04x", ch);
    else if (ch < 0x80)
      fputc(ch, f);
    else if ((n = utf8_len(s)) > 0) {
      fwrite(s, 1, (size_t)n, f);
      s += n;
      continue;
    } else
      fputs("\\ufffd", f);
    s++;
  }
  fputc('"', f);
}

unsigned tb_measured(const tb_report *r) {
  unsigned m = r->s->modes_on;
  if ((m & TB_MODE_AGNOSTIC) && !r->s->opts->no_syscalls)
    m |= TB_MODE_SYSCALLS;
  return m;
}

int tb_has_provider(const tb_report *r) { return (r->s->modes_on & TB_MODE_PROVIDER) != 0; }
