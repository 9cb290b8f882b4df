#!/usr/bin/env bash
# Overhead of tlsbridge-probe on a keep-alive TLS load (on demand; not part
# of run.sh). Runs the load with no probe, with --mode provider,agnostic and
# with --mode deep, interleaved round by round, and compares medians.
# Passes when provider+agnostic keeps >= 97% of the throughput without it;
# deep mode's cost is printed, not judged (it is the heavy mode).
#
#   tests/probe/overhead.sh [BUILD_DIR] [-r ROUNDS] [-s SECONDS] [--target driver|jvm|both]
#
#   driver: tb_load (libtlsbridge in a C process, in-memory pairs, 100
#           requests per connection)
#   jvm:    ProbeServer.java (jdk.httpserver, keep-alive) under wrk -c4, on
#           tlsbridge when a jar is found (TB_PROBE_JAR or target/), else SunJSSE
#
# Hook for the benchmark runner (e.g. Tomcat): set OVERHEAD_PID to the PID
# of a running server and OVERHEAD_LOAD_CMD to a command that runs one
# bounded load against it and prints its throughput (a number) as the last
# line of its output; the script then measures that target instead.
#   OVERHEAD_PID=$(pgrep -f catalina) OVERHEAD_LOAD_CMD="wrk -t2 -c16 -d10s https://127.0.0.1:8443/ | \
#     awk '/Requests\/sec/{print \$2}'" tests/probe/overhead.sh target/native
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
B=build
ROUNDS=5
SECS=5
TARGET=both
while (($#)); do
  case $1 in
    -r) ROUNDS=$2; shift ;;
    -s) SECS=$2; shift ;;
    --target) TARGET=$2; shift ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) B=$1 ;;
  esac
  shift
done
B=$(cd "$B" && pwd)
PROBE=$B/native/probe/tlsbridge-probe
LIB=$B/native/libtlsbridge.so
LOAD=$B/tests/probe/tb_load
[[ $(id -u) -eq 0 ]] || { echo "overhead.sh: needs root (BPF)"; exit 2; }
[[ -x $PROBE && -x $LOAD ]] || { echo "overhead.sh: $PROBE or $LOAD missing (build with -DTB_BUILD_PROBE=ON)"; exit 2; }
T=$(mktemp -d /tmp/tbover.XXXXXX)
declare -a KIDS=()
cleanup() { local p; for p in "${KIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done; rm -rf "$T"; }
trap cleanup EXIT

CONFIGS=(none "provider,agnostic" deep)
median() { sort -g | awk '{a[NR]=$1} END{if (NR%2) print a[(NR+1)/2]; else printf "%.4f\n", (a[NR/2]+a[NR/2+1])/2}'; }

# attach PID MODE: starts the probe (if MODE != none), waits until attached.
attach() {
  PP=
  [[ $2 == none ]] && return 0
  timeout $((SECS * 4 + 60)) "$PROBE" -p "$1" --mode "$2" --json -i 0 >"$T/probe.out" 2>"$T/probe.err" &
  PP=$!
  for _ in $(seq 200); do [[ -s $T/probe.out ]] && return 0; kill -0 "$PP" 2>/dev/null || break; sleep 0.05; done
  echo "overhead.sh: probe failed to attach: $(cat "$T/probe.err")" >&2
  return 1
}
detach() { # prints the probe's own cost line for the log
  [[ -z $PP ]] && return 0
  kill -INT "$PP"; wait "$PP"
  tail -1 "$T/probe.out" | jq -r '"    \(.modes | join(",")): probe_cpu_ns=\(.probe_cpu_ns) (self \(.probe_self_cpu_ns), bpf \(.probe_bpf_ns)) hits=\(.probe_hits) target_est_ns=\(.probe_target_est_ns) lost=\(.lost_events)"' >>"$T/cost.log"
}

# Each runner prints "REQUESTS_PER_S CPU_NS_PER_REQUEST": throughput, and the
# target's own CPU per request (BPF programs run in the target's context and
# are charged to it), which background load on a shared machine disturbs far
# less than throughput.
TICK_NS=$((1000000000 / $(getconf CLK_TCK)))
cpu_ns() { awk -v t="$TICK_NS" '{sub(/.*\) /, ""); split($0, f, " "); printf "%.0f\n", (f[12] + f[13]) * t}' "/proc/$1/stat"; }
per_req() { jq -rn --argjson rps "$1" --argjson cpu "$2" --argjson s "$3" '"\($rps) \($cpu / ($rps * $s) | round)"'; }

run_driver() { # MODE
  rm -f "$T/d.out" # a stale "ready" from the last run would be read as this one's
  mkfifo "$T/d.in"
  "$LOAD" "$LIB" --seconds "$SECS" 100 200 2000 <"$T/d.in" >"$T/d.out" 2>&1 &
  local lp=$!
  exec {fd}<>"$T/d.in"
  for _ in $(seq 100); do grep -qs '^ready' "$T/d.out" && break; sleep 0.05; done
  attach "$lp" "$1" || { exec {fd}>&-; rm -f "$T/d.in"; return 1; }
  echo go >&"$fd"
  for _ in $(seq $((SECS * 40 + 200))); do grep -qs '^{' "$T/d.out" && break; sleep 0.05; done
  detach
  exec {fd}>&-
  wait "$lp"
  rm -f "$T/d.in"
  grep '^{' "$T/d.out" | jq -r '"\(.requests_per_s) \(.cpu_ns / .requests | round)"'
}

start_jvm() {
  local jar prov=sunjsse cp=
  jar=${TB_PROBE_JAR:-$(ls "$ROOT"/target/tlsbridge-*.jar 2>/dev/null | grep -v -e sources -e javadoc | head -1)}
  [[ -n $jar && -f $jar ]] && { prov=tlsbridge; cp=$jar; }
  keytool -genkeypair -keystore "$T/ks.p12" -storetype PKCS12 -storepass changeit -keypass changeit -alias s \
    -keyalg EC -groupname secp256r1 -dname CN=localhost -validity 2 >/dev/null 2>&1
  mkfifo "$T/j.in"
  exec {JFD}<>"$T/j.in"
  java -Xmx256m -XX:-UseDynamicNumberOfCompilerThreads -Dsun.net.httpserver.nodelay=true ${cp:+-cp "$cp"} \
    "$HERE/ProbeServer.java" "$T/ks.p12" changeit 1024 "$prov" <"$T/j.in" >"$T/j.out" 2>&1 &
  JPID=$!
  KIDS+=($JPID)
  for _ in $(seq 300); do grep -qs '^port' "$T/j.out" && break; sleep 0.1; done
  JPORT=$(awk '/^port/{print $2}' "$T/j.out")
  [[ -n $JPORT ]] || { echo "overhead.sh: JVM server did not start: $(tail -3 "$T/j.out")"; return 1; }
  echo "JVM server: $(grep ^provider "$T/j.out"), port $JPORT"
  wrk -t1 -c4 -d"${SECS}s" "https://127.0.0.1:$JPORT/" >/dev/null 2>&1 # warm-up
}
run_jvm() { # MODE
  attach "$JPID" "$1" || return 1
  local r c0 c1 t0 t1
  c0=$(cpu_ns "$JPID"); t0=$(date +%s.%N)
  r=$(wrk -t1 -c4 -d"${SECS}s" "https://127.0.0.1:$JPORT/" | awk '/Requests\/sec/{print $2}')
  c1=$(cpu_ns "$JPID"); t1=$(date +%s.%N)
  detach
  per_req "$r" $((c1 - c0)) "$(echo "$t1 - $t0" | bc)"
}
run_hook() { # MODE
  attach "$OVERHEAD_PID" "$1" || return 1
  local r c0 c1 t0 t1
  c0=$(cpu_ns "$OVERHEAD_PID"); t0=$(date +%s.%N)
  r=$(bash -c "$OVERHEAD_LOAD_CMD" | tail -1)
  c1=$(cpu_ns "$OVERHEAD_PID"); t1=$(date +%s.%N)
  detach
  per_req "$r" $((c1 - c0)) "$(echo "$t1 - $t0" | bc)"
}

FAILED=0
measure() { # NAME RUNNER
  local name=$1 runner=$2 r c
  : >"$T/cost.log"
  for c in "${CONFIGS[@]}"; do : >"$T/res.$c"; done
  for ((r = 1; r <= ROUNDS; r++)); do
    for c in "${CONFIGS[@]}"; do
      v=$($runner "$c") || { echo "overhead.sh: $name $c failed"; FAILED=1; return; }
      echo "$v" >>"$T/res.$c"
      printf '  round %d %-18s %s\n' "$r" "$c" "$v"
    done
  done
  local base pa deep rpa rdeep cbase cpa cdeep
  col() { awk -v c="$1" '{print $c}' "$2"; }
  base=$(col 1 "$T/res.none" | median); pa=$(col 1 "$T/res.provider,agnostic" | median)
  deep=$(col 1 "$T/res.deep" | median)
  cbase=$(col 2 "$T/res.none" | median); cpa=$(col 2 "$T/res.provider,agnostic" | median)
  cdeep=$(col 2 "$T/res.deep" | median)
  # the verdict uses each round's own ratio (runs seconds apart share the
  # machine's background load), then the median over rounds
  rpa=$(paste "$T/res.provider,agnostic" "$T/res.none" | awk '{print $1 / $3}' | median)
  rdeep=$(paste "$T/res.deep" "$T/res.none" | awk '{print $1 / $3}' | median)
  echo "== $name: medians of $ROUNDS interleaved rounds of ${SECS}s"
  printf '  %-20s %12s %10s %16s %10s\n' config "requests/s" "vs none" "target ns/req" "vs none"
  printf '  %-20s %12s %10s %16s %10s\n' none "$base" "" "$cbase" ""
  printf '  %-20s %12s %9.1f%% %16s %+9.1f%%\n' provider,agnostic "$pa" "$(echo "$rpa * 100" | bc -l)" "$cpa" \
    "$(echo "($cpa / $cbase - 1) * 100" | bc -l)"
  printf '  %-20s %12s %9.1f%% %16s %+9.1f%%\n' "deep (heavy)" "$deep" "$(echo "$rdeep * 100" | bc -l)" "$cdeep" \
    "$(echo "($cdeep / $cbase - 1) * 100" | bc -l)"
  echo "  (requests/s vs none: median of per-round ratios; target ns/req: the target's CPU per request)"
  echo "  probe's own cost per run:"; cat "$T/cost.log"
  if jq -en --argjson r "$rpa" '$r >= 0.97' >/dev/null; then
    echo "PASS $name: provider,agnostic keeps >= 97% of throughput"
  else
    echo "FAIL $name: provider,agnostic below 97% of throughput (uptime: $(uptime | sed 's/.*load/load/'))"; FAILED=1
  fi
}

if [[ -n ${OVERHEAD_PID:-} && -n ${OVERHEAD_LOAD_CMD:-} ]]; then
  measure "external target (PID $OVERHEAD_PID)" run_hook
else
  [[ $TARGET == driver || $TARGET == both ]] && measure "tb_load (C, libtlsbridge)" run_driver
  if [[ $TARGET == jvm || $TARGET == both ]]; then
    start_jvm && measure "JVM keep-alive server" run_jvm
  fi
fi
exit $FAILED
