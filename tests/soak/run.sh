#!/usr/bin/env bash
# The soak test (see tests/soak/README.md).
#
#   tests/soak/run.sh [soak options]   the soak: by default 1,000,000 handshakes and 50 GB through
#                                      the engine and the SSLSocket, at most 120 minutes
#   tests/soak/run.sh target/native    what scripts/test runs (every tests/*/run.sh gets the build
#                                      dir): a ~30-second smoke of the same machinery
#   tests/soak/run.sh --smoke          the same smoke, by name
#
# Options (passed to org.tlsbridge.soak.Soak): --handshakes N, --bytes N[K|M|G], --minutes M,
# --sample-seconds S, --warmup FRACTION, --max-growth PERCENT, --engine-threads N,
# --socket-clients N. Writes tests/soak/out/<UTC timestamp>/{samples.csv,soak.png,summary.txt,soak.log}
# and prints `SUMMARY soak: N passed, M failed`; exits non-zero on failure.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../../scripts/lib/common.sh"
cd "$TB_ROOT"

SMOKE=0
if [[ $# -eq 1 && ( -d $1 || $1 == --smoke ) ]]; then
  SMOKE=1
  shift
fi

need_build_pkgs
need_pkgs gnuplot-nox openssl
export JAVA_HOME=${JAVA_HOME:-$(jdk17_home)}
export PATH=$JAVA_HOME/bin:$PATH

find_jar() { ls target/tlsbridge-*.jar 2>/dev/null | grep -vE -- '-(sources|javadoc|tests)\.jar$' | head -1; }
JAR=$(find_jar)
if [[ -z $JAR ]] || [[ -n $(find java/src/main native pom.xml CMakeLists.txt -newer "$JAR" -type f 2>/dev/null | head -1) ]]; then
  log "building tlsbridge (mvn package, tests skipped)"
  mvn -B -q package -DskipTests 2>&1 | grep -vE '^\[ *[0-9]+%\]|^-- ' | tail -40
  ((PIPESTATUS[0] == 0)) || { echo "SUMMARY soak: 0 passed, 1 failed"; die "build failed"; }
  JAR=$(find_jar)
fi

OUT=$HERE/out/$(date -u +%Y%m%dT%H%M%SZ)$( ((SMOKE)) && echo -smoke)
mkdir -p "$OUT/classes" "$OUT/pki"

# The soak's own PKI: a CA, an ECDSA P-256 and an RSA-2048 server certificate for localhost.
pki() {
  cd "$OUT/pki" || return 1
  openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 7 -subj "/CN=tlsbridge soak CA" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign || return 1
  local name
  for name in ec rsa; do
    if [[ $name == ec ]]; then
      openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out $name.key || return 1
    else
      openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out $name.key || return 1
    fi
    openssl req -new -key $name.key -out $name.csr -subj /CN=localhost || return 1
    printf 'basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n' >$name.ext
    openssl x509 -req -in $name.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 7 -extfile $name.ext \
      -out $name.pem || return 1
    openssl pkcs12 -export -inkey $name.key -in $name.pem -certfile ca.pem -name $name -passout pass:soak \
      -out $name.p12 || return 1
  done
}
(pki) >"$OUT/pki/openssl.log" 2>&1 || { cat "$OUT/pki/openssl.log"; echo "SUMMARY soak: 0 passed, 1 failed"; exit 1; }

javac -d "$OUT/classes" -cp "$JAR" "$HERE"/src/org/tlsbridge/soak/*.java \
  || { echo "SUMMARY soak: 0 passed, 1 failed"; exit 1; }

if ((SMOKE)); then
  # Too short for the 5% bound (the JIT, caches and malloc arenas are still settling): this
  # proves the machinery - loads, byte checks, closes, sampling, growth figures, plot. Its
  # 200% bound catches only gross leaks (every SSL kept would be far above it in 30 s).
  set -- --handshakes 50000 --bytes 2G --minutes 0.5 --sample-seconds 2 --warmup 0.3 --max-growth 200
  log "soak smoke (~30 s): $*"
fi

# The JVM's hard bound: the driver stops itself at --minutes; this kills it 10 minutes later.
MINUTES=120
prev=
for a in "$@"; do
  [[ $prev == --minutes ]] && MINUTES=$a
  prev=$a
done
LIMIT=$(python3 -c "import math; print(math.ceil(float('$MINUTES') * 60) + 600)")

# Fixed, pre-touched heap: the RSS series then shows native growth, not the heap being committed.
# Serial GC: no remembered sets or GC worker threads whose malloc churn would blur the native heap.
# MarkSweepDeadRatio=0: every full GC compacts completely; by default Serial leaves up to 5% of the
# old generation as dead wood on three collections out of four, which reads as a 4 MB saw-tooth
# in "Java heap after GC". SOAK_JVM_OPTS adds JVM options.
# shellcheck disable=SC2086
timeout -s KILL "$LIMIT" "$JAVA_HOME/bin/java" -Xms128m -Xmx128m -XX:+AlwaysPreTouch -XX:+UseSerialGC \
  -XX:MarkSweepDeadRatio=0 ${SOAK_JVM_OPTS:-} \
  -cp "$JAR:$OUT/classes" org.tlsbridge.soak.Soak --pki "$OUT/pki" --out "$OUT" "$@" 2>&1 | tee "$OUT/soak.log"
RC=${PIPESTATUS[0]}

PLOT_OK=0
if [[ -s $OUT/samples.csv && -s $OUT/verdict.gp ]]; then
  gnuplot <<GP >"$OUT/gnuplot.log" 2>&1 && PLOT_OK=1
load "$OUT/verdict.gp"
set terminal pngcairo size 1400,900 font ",10"
set output "$OUT/soak.png"
set datafile separator ","
set key bottom right
set grid
set yrange [0:*]
set offsets 0, 0, graph 0.08, 0
set style rect fc rgb "#eeeeee" fs solid noborder
set obj 1 rect from w0, graph 0 to w1, graph 1 behind
set obj 2 rect from f0, graph 0 to graph 1, graph 1 behind
set multiplot layout 2,2 title "tlsbridge soak: ".runinfo."\\nshaded: baseline window (after the warm-up) and final window; dashed: their medians"
set xlabel "elapsed (min)"
set ylabel "MB"; set title "RSS (VmRSS): ".g_rss
plot "$OUT/samples.csv" every ::1 using (\$1/60):(\$5/1024) with linespoints pt 7 ps 0.3 title "RSS", \
  b_rss with lines dt 2 lc rgb "gray40" notitle, f_rss with lines dt 2 lc rgb "red" notitle
set title "native heap (glibc mallinfo2: uordblks + hblkhd): ".g_nat
plot "$OUT/samples.csv" every ::1 using (\$1/60):(\$6/1048576) with linespoints pt 7 ps 0.3 title "native heap", \
  b_nat with lines dt 2 lc rgb "gray40" notitle, f_nat with lines dt 2 lc rgb "red" notitle
set title "Java heap left by a full GC: ".g_heap
plot "$OUT/samples.csv" every ::1 using (\$1/60):(\$7/1048576) with linespoints pt 7 ps 0.3 title "Java heap", \
  b_heap with lines dt 2 lc rgb "gray40" notitle, f_heap with lines dt 2 lc rgb "red" notitle
set ylabel "count"; set title "open file descriptors (/proc/self/fd): ".g_fds
plot "$OUT/samples.csv" every ::1 using (\$1/60):8 with linespoints pt 7 ps 0.3 title "descriptors", \
  b_fds with lines dt 2 lc rgb "gray40" notitle, f_fds with lines dt 2 lc rgb "red" notitle
unset multiplot
GP
fi
[[ $PLOT_OK == 1 && -s $OUT/soak.png ]] || { PLOT_OK=0; cat "$OUT/gnuplot.log" 2>/dev/null; }

read -r P F < <(sed -nE 's/^checks: ([0-9]+) passed, ([0-9]+) failed/\1 \2/p' "$OUT/summary.txt" 2>/dev/null)
P=${P:-0}; F=${F:-1}
if ((PLOT_OK)); then P=$((P + 1)); else F=$((F + 1)); echo "FAIL: no plot"; fi
((RC == 0)) || [[ $F -gt 0 ]] || F=1
echo "results: $OUT"
echo "SUMMARY soak: $P passed, $F failed"
((RC == 0 && F == 0))
