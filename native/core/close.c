/* Closing an engine: close_notify queued on closeOutbound or on the peer's,
 * inbound closed with truncation reported, and what an engine whose
 * outbound is done lets go of at once. Servers like Tomcat close with
 * closeOutbound and a wrap and never call closeInbound: the engine then
 * waits for a GC and the Cleaner, on another thread, holding whatever it
 * did not give back here. Inbound stays readable (half-close, the JSSE
 * contract): the peer's data, its close_notify, a KeyUpdate or a
 * NewSessionTicket still unwrap. */
#include "tb.h"

#include <stdlib.h>

void tb_queue_close_notify(tb_engine *e) {
  if (e->flags & TB_F_OUT_CLOSING)
    return;
  e->flags |= TB_F_OUT_CLOSING;
  if (e->flags & TB_F_HS_DONE) {
    ERR_clear_error();
    SSL_shutdown(e->ssl);
    /* close_notify has gone through OpenSSL's write buffer into our queue:
     * both record buffers (~35 KB) go back now, on the thread that
     * allocated them. A later unwrap allocates a read buffer again; OpenSSL
     * keeps both if a record is half read or written. */
    SSL_free_buffers(e->ssl);
    ERR_clear_error();
  }
}

void tb_shed_closed_out(tb_engine *e) {
  if (!tb_outbound_done(e))
    return;
  /* The queue held the handshake flights and the close_notify, all wrapped
   * out now; a reply OpenSSL writes later (to a KeyUpdate) allocates it
   * again, as the first flight did. */
  free(e->io.spill);
  e->io.spill = NULL;
  e->io.spill_off = e->io.spill_cap = 0;
  /* The protocols a server accepts serve the ALPN callback of a handshake,
   * and none can begin once outbound is closed. */
  free(e->alpn_accept);
  e->alpn_accept = NULL;
  e->alpn_accept_len = 0;
  /* A close in the middle of a handshake queued no close_notify, so its
   * record buffers are still held; nothing more is read or written. */
  if (!(e->flags & TB_F_HS_DONE) && !(e->flags & TB_F_SOCKET))
    SSL_free_buffers(e->ssl);
}

void tb_engine_close_outbound(tb_engine *e) {
  if (!(e->flags & TB_F_HS_DONE)) {
    /* OpenSSL cannot send close_notify mid-handshake; the handshake simply
     * ends here and nothing more is written. */
    e->flags |= TB_F_OUT_CLOSING;
    if (e->flags & TB_F_STARTED)
      e->flags |= TB_F_IN_DONE;
    e->task = TB_TASK_NONE;
    tb_shed_closed_out(e);
    return;
  }
  tb_queue_close_notify(e);
}

/* Returns 1 when inbound closes before the peer's close_notify arrived
 * (possible truncation), which Java reports as SunJSSE does. */
int tb_engine_close_inbound(tb_engine *e) {
  int truncated = (e->flags & TB_F_STARTED) && !(e->flags & (TB_F_PEER_CLOSED | TB_F_FAILED | TB_F_IN_DONE));
  e->flags |= TB_F_IN_DONE;
  if (truncated)
    tb_engine_close_outbound(e);
  return truncated;
}
