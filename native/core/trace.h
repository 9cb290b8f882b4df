/* Probe points for tlsbridge-probe (USDT). Each is called at a coarse
 * boundary only: handshake done, connection closed, error. With no probe
 * attached they must cost a not-taken branch. */
#ifndef TB_TRACE_H
#define TB_TRACE_H
#include "tb.h"

static inline void tb_trace_handshake(tb_engine *e) { (void)e; }
static inline void tb_trace_close(tb_engine *e) { (void)e; }
static inline void tb_trace_error(tb_engine *e) { (void)e; }
#endif
