"""PNG charts with gnuplot (Debian's gnuplot-nox): per workload, median CPU
per request (with min-max bars) and median requests/s per variant. Every
ratio a chart prints reads as in the text, tlsbridge's CPU over the other's
(the bar labels come from report_summary.chart_label)."""

import os
import subprocess

# under each chart's title: which ratios the labels print and how they
# relate to the text's
SUBTITLE = ("ratios: tlsbridge's CPU per request over that bar's, from the medians of the repetitions "
            "(the text's paired ratios, medians of alternating pairs, can differ a little)")


def workload_chart(path, title, rows):
    """rows: [(label, cpu_med, cpu_min, cpu_max, rps_med, flagged)]; the
    label carries tlsbridge's CPU ratio over that bar (or a tlsbridge bar's
    own CPU) and the cell's mark ([CONTENDED]...); a flagged cell's bars are
    orange, a colour no other bar uses."""
    if not rows:
        return None
    dat = path[:-4] + ".dat"
    with open(dat, "w") as f:
        for i, (v, med, lo, hi, rps, bad) in enumerate(rows):
            f.write(f'{i} "{v}" {med} {lo} {hi} {rps} {1 if bad else 0}\n')
    # the subtitle only where a label prints a ratio (not on plain HTTP)
    sub = f"\\n{SUBTITLE}" if any(r[0].endswith("x this") for r in rows) else ""
    script = f"""
set terminal pngcairo size 1400,{460 + 14 * len(rows)} font "DejaVu Sans,9"
set output "{path}"
set termoption noenhanced
set multiplot title "{title}{sub}"
set style fill solid 0.6 border -1
set boxwidth 0.6
set grid xtics
set yrange [-0.6:{len(rows) - 0.4}]
set ytics ({", ".join(f'"{r[0]}" {i}' for i, r in enumerate(rows))})
set xrange [0:*]
set size 0.64,0.9
set origin 0,0
set xtics rotate by -30
set bmargin 4
set tmargin 4
set title "server CPU ms per request (median, min-max; lower is better)\\nblue: clean; orange: not clean (its mark says why)"
plot "{dat}" using (0.5*$3):1:(0.5*$3):(0.3):($7 > 0.5 ? 0xee7733 : 0x4477aa) with boxxyerror notitle lc rgb variable, \\
     "{dat}" using 3:1:4:5 with xerrorbars notitle lc rgb "black" pt 7 ps 0.4
set title "requests/s (median; higher is better)\\ngrey: clean; orange: not clean"
unset ytics
set size 0.36,0.9
set origin 0.64,0
set xtics autofreq
set offsets 0, graph 0.22, 0, 0
plot "{dat}" using (0.5*$6):1:(0.5*$6):(0.3):($7 > 0.5 ? 0xee7733 : 0x999999) with boxxyerror notitle lc rgb variable, \\
     "{dat}" using 6:1:(sprintf(" %.0f", $6)) with labels left notitle
unset multiplot
"""
    try:
        subprocess.run(["gnuplot"], input=script.encode(), check=True, capture_output=True, timeout=60)
    except (OSError, subprocess.CalledProcessError, subprocess.TimeoutExpired) as e:
        err = getattr(e, "stderr", b"") or b""
        print(f"[bench] gnuplot failed for {path}: {e} {err.decode(errors='replace')[-300:]}")
        return None
    finally:
        if os.path.exists(dat):
            os.remove(dat)
    return path
