/* Attaching per mode. Provider mode attaches USDT probes to the libtlsbridge
 * inode the target has mapped; agnostic mode needs no file at all (scheduler
 * and syscall tracepoints, filtered to the PID in the kernel); deep mode puts
 * uprobes and uretprobes on the target's own libssl. */
#include "attach.h"
#include "probe.h"
#include "probe.skel.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

static int add_link(tb_session *s, struct bpf_link *l, const char *what) {
  if (!l) {
    fprintf(stderr, "tlsbridge-probe: cannot attach %s: %s\n", what, strerror(errno));
    return -1;
  }
  if (s->nlinks == TB_MAX_LINKS) {
    bpf_link__destroy(l);
    fprintf(stderr, "tlsbridge-probe: too many probes\n");
    return -1;
  }
  s->links[s->nlinks++] = l;
  return 0;
}

int tb_session_load(tb_session *s, const tb_opts *o) {
  struct probe_bpf *skel;
  int provider = (o->modes & TB_MODE_PROVIDER) != 0, agnostic = (o->modes & TB_MODE_AGNOSTIC) != 0;
  int deep = (o->modes & TB_MODE_DEEP) != 0, err;
  s->opts = o;
  skel = probe_bpf__open();
  if (!skel) {
    fprintf(stderr, "tlsbridge-probe: cannot open the BPF object: %s\n", strerror(errno));
    return -1;
  }
  s->skel = skel;
  skel->rodata->target_tgid = (__u32)o->pid;
  bpf_program__set_autoload(skel->progs.on_handshake, provider);
  bpf_program__set_autoload(skel->progs.on_close, provider);
  bpf_program__set_autoload(skel->progs.on_error, provider);
  bpf_program__set_autoload(skel->progs.on_switch, agnostic);
  bpf_program__set_autoload(skel->progs.on_sys_exit, agnostic && !o->no_syscalls);
  bpf_program__set_autoload(skel->progs.on_ssl_enter, deep);
  bpf_program__set_autoload(skel->progs.on_ssl_exit, deep);
  err = probe_bpf__load(skel);
  if (err) {
    fprintf(stderr, "tlsbridge-probe: cannot load the BPF programs (%s); run with -v for the "
                    "verifier log\n", strerror(-err));
    return -1;
  }
  return 0;
}

static const char *const USDT_NAMES[] = {"handshake", "close", "error"};

int tb_attach_provider(tb_session *s) {
  struct bpf_program *progs[3] = {s->skel->progs.on_handshake, s->skel->progs.on_close,
                                  s->skel->progs.on_error};
  const char *path;
  int i, first = s->nlinks;
  if (s->modes_on & TB_MODE_PROVIDER)
    return 0;
  if (s->opts->lib_path) {
    snprintf(s->lib.shown, sizeof s->lib.shown, "%s", s->opts->lib_path);
    snprintf(s->lib.open_path, sizeof s->lib.open_path, "%s", s->opts->lib_path);
    s->have_lib = 1;
  } else {
    int r = tb_find_mapping(s->opts->pid, "libtlsbridge", &s->lib);
    if (r < 0) {
      fprintf(stderr, "tlsbridge-probe: cannot read /proc/%d/maps: %s\n", s->opts->pid, strerror(errno));
      return -1;
    }
    if (r == 0)
      return 1;
    s->have_lib = 1;
  }
  path = s->lib.open_path;
  for (i = 0; i < 3; i++) {
    struct bpf_link *l = bpf_program__attach_usdt(progs[i], s->opts->pid, path, "tlsbridge",
                                                  USDT_NAMES[i], NULL);
    if (!l) {
      int e = errno;
      while (s->nlinks > first)
        bpf_link__destroy(s->links[--s->nlinks]);
      fprintf(stderr, "tlsbridge-probe: cannot attach USDT tlsbridge:%s in %s%s: %s%s\n",
              USDT_NAMES[i], s->lib.shown, s->lib.deleted ? " (deleted)" : "", strerror(e),
              e == ENOENT ? " (a libtlsbridge built without probe sites?)" : "");
      return -1;
    }
    if (add_link(s, l, USDT_NAMES[i]))
      return -1;
  }
  s->usdt_sites = 3;
  s->modes_on |= TB_MODE_PROVIDER;
  return 0;
}

int tb_attach_agnostic(tb_session *s) {
  if (s->modes_on & TB_MODE_AGNOSTIC)
    return 0;
  if (add_link(s, bpf_program__attach(s->skel->progs.on_switch), "sched_switch"))
    return -1;
  if (!s->opts->no_syscalls &&
      add_link(s, bpf_program__attach(s->skel->progs.on_sys_exit), "sys_exit"))
    return -1;
  s->modes_on |= TB_MODE_AGNOSTIC;
  return 0;
}

static const char *const DEEP_FNS[TB_DEEP_FNS] = {
    [TB_DEEP_SSL_READ] = "SSL_read", [TB_DEEP_SSL_WRITE] = "SSL_write",
    [TB_DEEP_SSL_READ_EX] = "SSL_read_ex", [TB_DEEP_SSL_WRITE_EX] = "SSL_write_ex",
    [TB_DEEP_SSL_DO_HANDSHAKE] = "SSL_do_handshake"};

int tb_attach_deep(tb_session *s) {
  int r, fn;
  if (s->modes_on & TB_MODE_DEEP)
    return 0;
  r = tb_find_mapping(s->opts->pid, "libssl.so", &s->libssl);
  if (r <= 0)
    return r < 0 ? -1 : 1;
  s->have_libssl = 1;
  for (fn = 0; fn < TB_DEEP_FNS; fn++) {
    for (int ret = 0; ret < 2; ret++) {
      LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = DEEP_FNS[fn], .retprobe = ret,
                  .bpf_cookie = (__u64)fn);
      struct bpf_program *p = ret ? s->skel->progs.on_ssl_exit : s->skel->progs.on_ssl_enter;
      char what[64];
      snprintf(what, sizeof what, "%s %s", ret ? "uretprobe" : "uprobe", DEEP_FNS[fn]);
      if (add_link(s, bpf_program__attach_uprobe_opts(p, s->opts->pid, s->libssl.open_path, 0, &uo),
                   what))
        return -1;
    }
  }
  s->modes_on |= TB_MODE_DEEP;
  return 0;
}

void tb_session_close(tb_session *s) {
  while (s->nlinks > 0)
    bpf_link__destroy(s->links[--s->nlinks]);
  probe_bpf__destroy(s->skel);
  s->skel = NULL;
}
