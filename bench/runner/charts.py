"""PNG charts with gnuplot (Debian's gnuplot-nox): per workload, median CPU
per request (with min-max bars) and median requests/s per variant."""

import os
import subprocess


def workload_chart(path, title, rows):
    """rows: [(label, cpu_med, cpu_min, cpu_max, rps_med, flagged)]; the
    label carries the CPU ratio over SunJSSE and the cell's mark
    ([CONTENDED]...), a flagged cell's bars are hatched orange."""
    if not rows:
        return None
    dat = path[:-4] + ".dat"
    with open(dat, "w") as f:
        for i, (v, med, lo, hi, rps, bad) in enumerate(rows):
            f.write(f'{i} "{v}" {med} {lo} {hi} {rps} {1 if bad else 0}\n')
    script = f"""
set terminal pngcairo size 1300,{420 + 14 * len(rows)} font "DejaVu Sans,9"
set output "{path}"
set termoption noenhanced
set multiplot layout 1,2 title "{title}"
set style fill solid 0.6 border -1
set boxwidth 0.6
set grid xtics
set yrange [-0.6:{len(rows) - 0.4}]
set ytics ({", ".join(f'"{r[0]}" {i}' for i, r in enumerate(rows))})
set xrange [0:*]
set title "server CPU ms per request (median, min-max; lower is better)\\na ratio after a name (0.52x): its CPU over SunJSSE's"
plot "{dat}" using (0.5*$3):1:(0.5*$3):(0.3):($7 > 0.5 ? 0xee7733 : 0x4477aa) with boxxyerror notitle lc rgb variable, \\
     "{dat}" using 3:1:4:5 with xerrorbars notitle lc rgb "black" pt 7 ps 0.4
set title "requests/s (median)\\norange bars: a figure that is not clean (its mark says why)"
unset ytics
plot "{dat}" using (0.5*$6):1:(0.5*$6):(0.3):($7 > 0.5 ? 0xee7733 : 0xee6677) with boxxyerror notitle lc rgb variable
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
