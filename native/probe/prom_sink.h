/* Where OpenMetrics text goes: a file rewritten atomically, or a tiny HTTP
 * endpoint that answers every GET with the latest text. */
#ifndef TB_PROBE_PROM_SINK_H
#define TB_PROBE_PROM_SINK_H
#include <stddef.h>

int tb_prom_write_file(const char *path, const char *body, size_t len);
/* Listening socket on addr:port, or -1 (message printed). */
int tb_prom_listen(const char *addr, int port);
/* Accepts one pending connection on lfd and answers it. */
void tb_prom_serve(int lfd, const char *body, size_t len);
#endif
