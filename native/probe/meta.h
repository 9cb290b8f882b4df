/* Versions of everything involved, for the metadata record. */
#ifndef TB_PROBE_META_H
#define TB_PROBE_META_H
#include "format.h"

void tb_meta_collect(tb_meta *m, const tb_session *s);
#endif
