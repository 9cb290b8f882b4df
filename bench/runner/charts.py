"""PNG charts with gnuplot (Debian's gnuplot-nox): per workload, median CPU
per request (with min-max bars) and median requests/s per variant."""

import os
import subprocess


def workload_chart(path, title, rows):
    """rows: [(variant, cpu_med, cpu_min, cpu_max, rps_med)]"""
    if not rows:
        return None
    dat = path[:-4] + ".dat"
    with open(dat, "w") as f:
        for i, (v, med, lo, hi, rps) in enumerate(rows):
            f.write(f'{i} "{v}" {med} {lo} {hi} {rps}\n')
    script = f"""
set terminal pngcairo size 1100,{420 + 14 * len(rows)} font "DejaVu Sans,9"
set output "{path}"
set termoption noenhanced
set multiplot layout 1,2 title "{title}"
set style fill solid 0.6 border -1
set boxwidth 0.6
set grid xtics
set yrange [-0.6:{len(rows) - 0.4}]
set ytics ({", ".join(f'"{r[0]}" {i}' for i, r in enumerate(rows))})
set xrange [0:*]
set title "server CPU ms per request (median, min-max)"
plot "{dat}" using (0.5*$3):1:(0.5*$3):(0.3) with boxxyerror notitle lc rgb "#4477aa", \\
     "{dat}" using 3:1:4:5 with xerrorbars notitle lc rgb "black" pt 7 ps 0.4
set title "requests/s (median)"
unset ytics
plot "{dat}" using (0.5*$6):1:(0.5*$6):(0.3) with boxxyerror notitle lc rgb "#ee6677"
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
