/* Loading the BPF object and attaching it, one function per mode. */
#ifndef TB_PROBE_ATTACH_H
#define TB_PROBE_ATTACH_H
#include "options.h"
#include "procfs.h"

struct probe_bpf;
struct bpf_link;

#define TB_MAX_LINKS 32

typedef struct tb_session {
  const tb_opts *opts;
  struct probe_bpf *skel;
  unsigned modes_on;           /* modes attached so far */
  struct bpf_link *links[TB_MAX_LINKS];
  int nlinks;
  tb_mapped lib, libssl, libcrypto, jvm;
  int have_lib, have_libssl, have_libcrypto, is_jvm;
  int usdt_sites;              /* probe sites found in libtlsbridge */
} tb_session;

/* Opens and loads the BPF object for the requested modes. -1 on error
 * (message printed). */
int tb_session_load(tb_session *s, const tb_opts *o);
/* 0 attached, 1 libtlsbridge not mapped (yet), -1 error (message printed). */
int tb_attach_provider(tb_session *s);
/* 0 attached, -1 error. */
int tb_attach_agnostic(tb_session *s);
/* 0 attached, 1 libssl not mapped, -1 error. */
int tb_attach_deep(tb_session *s);
void tb_session_close(tb_session *s);
#endif
