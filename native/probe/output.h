/* The three output formats. Each prints one report (or the metadata) to f. */
#ifndef TB_PROBE_OUTPUT_H
#define TB_PROBE_OUTPUT_H
#include "format.h"

void tb_json_meta(FILE *f, const tb_report *r);
void tb_json_report(FILE *f, const tb_report *r);
void tb_human_meta(FILE *f, const tb_report *r);
void tb_human_report(FILE *f, const tb_report *r, int timestamps, int threads_top);
/* OpenMetrics text of the totals since attach (r->type is "summary"). */
void tb_prom_report(FILE *f, const tb_report *r);
#endif
