/* Kernel, libbpf, JDK and OpenSSL versions: the facts a reader of a result
 * needs to compare it with another. */
#include "meta.h"

#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <bpf/libbpf.h>

void tb_meta_collect(tb_meta *m, const tb_session *s) {
  struct utsname u;
  tb_mapped jvm;
  char version[64];
  snprintf(m->kernel, sizeof m->kernel, "%s", uname(&u) == 0 ? u.release : "unknown");
  snprintf(m->libbpf, sizeof m->libbpf, "%s", libbpf_version_string());
  tb_pid_comm(s->opts->pid, m->comm, sizeof m->comm);
  if (tb_is_jvm(s->opts->pid, &jvm))
    tb_jdk_version(&jvm, m->jdk, sizeof m->jdk);
  else
    snprintf(m->jdk, sizeof m->jdk, "none");
  m->openssl[0] = 0;
  /* tlsbridge's own OpenSSL first: another libcrypto in the process (a
   * library of the application's) does not serve its TLS */
  if (s->have_lib && tb_linked_openssl(&s->lib, version, sizeof version)) {
    const char *base = strrchr(s->lib.shown, '/');
    snprintf(m->openssl, sizeof m->openssl, "%s, inside %s", version, base ? base + 1 : s->lib.shown);
  } else if (s->have_libcrypto) {
    tb_openssl_version(&s->libcrypto, m->openssl, sizeof m->openssl);
  }
}
