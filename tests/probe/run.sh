#!/usr/bin/env bash
# tlsbridge-probe checks. Builds nothing: takes the CMake build dir ($1,
# default "build") holding native/libtlsbridge.so, native/probe/tlsbridge-probe
# and tests/probe/tb_load. Prints one PASS/FAIL line per check and ends with
# "SUMMARY probe: N passed, M failed". Where BPF cannot run at all (not root,
# no BTF, no uprobe PMU) it prints "NOT RUN: <reason>" and exits 0; anywhere
# else a probe that does not work FAILS.
#
# Optional: TB_PROBE_JAR=path/to/tlsbridge.jar adds the JVM + tlsbridge check
# (otherwise looked for under target/).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
B=$(cd "${1:-build}" 2>/dev/null && pwd) || B=${1:-build}
PROBE=$B/native/probe/tlsbridge-probe
LIB=$B/native/libtlsbridge.so
LOAD=$B/tests/probe/tb_load
PASS=0
FAIL=0
T=$(mktemp -d /tmp/tbprobe.XXXXXX)
declare -a KIDS=()

summary() { echo "SUMMARY probe: $PASS passed, $FAIL failed"; }
cleanup() {
  local p
  for p in "${KIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
  sleep 0.2
  for p in "${KIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
  rm -rf "$T"
}
trap cleanup EXIT
ok() { echo "PASS $1${2:+ ($2)}"; PASS=$((PASS + 1)); }
bad() { echo "FAIL $1: $2"; FAIL=$((FAIL + 1)); }
not_run() { echo "NOT RUN: $1"; summary; exit 0; }

# --- can BPF run here at all? ---
[[ $(id -u) -eq 0 ]] || not_run "probe tests need root (BPF programs and uprobes); run as root"
[[ -r /sys/kernel/btf/vmlinux ]] || not_run "kernel has no BTF (/sys/kernel/btf/vmlinux): CO-RE cannot load"
[[ -e /sys/bus/event_source/devices/uprobe/type ]] || not_run "kernel has no uprobe PMU"
command -v jq >/dev/null || { bad "tools" "jq is needed to read the probe's JSON"; summary; exit 1; }
for f in "$PROBE" "$LIB" "$LOAD"; do
  [[ -x $f || -f $f ]] || { bad "build" "$f missing (configure with -DTB_BUILD_PROBE=ON)"; summary; exit 1; }
done

# within A B PCT: |A-B| <= PCT% of B
within() { jq -n --argjson a "$1" --argjson b "$2" --argjson p "$3" \
  'if $b == 0 then ($a == 0) else ((($a - $b) | fabs) <= ($b * $p / 100)) end' | grep -q true; }

# start_load NAME ARGS...: tb_load in the background, stdin held open on a fifo.
start_load() {
  local name=$1; shift
  mkfifo "$T/$name.in"
  "$LOAD" "$@" <"$T/$name.in" >"$T/$name.out" 2>"$T/$name.err" &
  KIDS+=($!)
  exec {LOAD_FD}<>"$T/$name.in"
  LOAD_OUT=$T/$name.out
  for _ in $(seq 400); do grep -qs '^ready' "$LOAD_OUT" && break; sleep 0.05; done
  LOAD_PID=$(awk '/^ready/{print $2}' "$LOAD_OUT")
  [[ -n $LOAD_PID ]]
}
finish_load() { # waits for the truth line, leaves the process alive
  for _ in $(seq 1200); do grep -qs '^{' "$LOAD_OUT" && return 0; sleep 0.05; done
  return 1
}
end_load() { exec {LOAD_FD}>&-; wait "$LOAD_PID" 2>/dev/null; }

# start_probe NAME ARGS...: the probe in the background; waits for its first
# line (it prints it once attached and calibrated).
start_probe() {
  local name=$1; shift
  timeout 120 "$PROBE" "$@" >"$T/$name.probe" 2>"$T/$name.perr" &
  PROBE_PID=$!
  KIDS+=($PROBE_PID)
  PROBE_OUT=$T/$name.probe
  PROBE_ERR=$T/$name.perr
  for _ in $(seq 600); do
    [[ -s $PROBE_OUT ]] && return 0
    kill -0 "$PROBE_PID" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}
stop_probe() { kill -INT "$PROBE_PID" 2>/dev/null; wait "$PROBE_PID"; }
field() { tail -1 "$PROBE_OUT" | jq -r "$1"; }

# --- the probe sites in libtlsbridge: 5-byte nops, each with a semaphore ---
sites() {
  local notes locs bad_sites=() n=0 loc sema
  command -v readelf >/dev/null && command -v objdump >/dev/null || { echo "readelf/objdump missing"; return 1; }
  notes=$(readelf -n "$LIB" | grep -A3 'Provider: tlsbridge$')
  objdump -d "$LIB" >"$T/lib.dis"
  while read -r loc sema; do
    n=$((n + 1))
    ((sema != 0)) || bad_sites+=("$loc has no semaphore")
    grep -qE "^ *$(printf '%x' "$loc"):\s+0f 1f 44 00 00 " "$T/lib.dis" || bad_sites+=("$loc is not a 5-byte nop")
  done < <(awk '/Location:/{gsub(",", ""); print $2, $6}' <<<"$notes")
  for name in handshake close error; do grep -q "Name: $name$" <<<"$notes" || bad_sites+=("no tlsbridge:$name"); done
  ((${#bad_sites[@]} == 0)) || { echo "${bad_sites[*]}"; return 1; }
  echo "$n sites"
}
if r=$(sites); then ok "USDT sites are 5-byte nops with semaphores" "$r"; else bad "USDT sites are 5-byte nops with semaphores" "$r"; fi

# --- 1. provider mode counts against the driver's own truth ---
provider_counts() { # NAME LOADARGS...
  local name=$1; shift
  if ! start_load "$name" "$LIB" "$@"; then bad "$name" "tb_load did not start: $(cat "$T/$name.err")"; return; fi
  if ! start_probe "$name" -p "$LOAD_PID" --mode provider --json -i 0.2; then
    bad "$name" "probe did not attach: $(cat "$PROBE_ERR")"; end_load; return
  fi
  echo go >&"$LOAD_FD"
  if ! finish_load; then bad "$name" "load did not finish"; stop_probe; end_load; return; fi
  sleep 0.5
  stop_probe
  local truth msgs=() k t p
  truth=$(grep '^{' "$LOAD_OUT")
  [[ $(field .type) == summary ]] || msgs+=("last JSON line is not the summary")
  for k in handshakes resumed bytes_in bytes_out app_bytes_in app_bytes_out errors; do
    t=$(jq -r ".$k" <<<"$truth"); p=$(field ".$k")
    within "$p" "$t" 1 || msgs+=("$k: probe $p vs truth $t")
  done
  # every engine freed fires close: two per connection plus the failed ones
  [[ $(field .closes) == $(( $(jq '.connections * 2 + .errors' <<<"$truth") )) ]] ||
    msgs+=("closes $(field .closes) vs $(jq '.connections * 2 + .errors' <<<"$truth")")
  EXTRA="handshakes $(field .handshakes)/$(jq .handshakes <<<"$truth"), bytes_in $(field .bytes_in)/$(jq .bytes_in <<<"$truth")"
  EXTRA+=", probe cpu $(field .probe_cpu_ns) ns, per hit $(field .per_hit_ns) ns"
  if ((${#msgs[@]})); then bad "$name" "${msgs[*]}"; else ok "$name" "$EXTRA"; fi
  end_load
}
provider_counts "provider counts vs truth (C driver)" --errors 5 300 3000 200 2000
# every full handshake carries its key-exchange group (the driver's OpenSSL 3.0: x25519)
if [[ $(field '.groups | add // 0') == $(field .handshakes) && $(field '.groups.x25519 // 0') -gt 0 ]]; then
  ok "handshake event carries the group" "$(tail -1 "$PROBE_OUT" | jq -c .groups)"
else bad "handshake event carries the group" "groups $(tail -1 "$PROBE_OUT" | jq -c .groups) vs handshakes $(field .handshakes)"; fi
provider_counts "provider counts, library deleted after load, resumed sessions" --unlink --resume 100 500 100 4000
if (($(field .resumed) < 100)); then bad "resumed handshakes seen" "resumed $(field .resumed)"; else ok "resumed handshakes seen" "$(field .resumed) of $(field .handshakes)"; fi
# the deleted-library run must really have gone through a deleted path
if head -1 "$PROBE_OUT" | jq -e '.type == "meta" and .library.deleted == true and
     (.library.opened_as | test("map_files"))' >/dev/null; then
  ok "deleted library reached via /proc/PID/map_files"
else
  bad "deleted library reached via /proc/PID/map_files" "$(head -1 "$PROBE_OUT")"
fi

# --- provider mode attaching when the library appears after the probe started ---
late="provider attaches when libtlsbridge is loaded later"
if start_load late "$LIB" --late-load 2.5 40 200 100 1000 &&
   start_probe late -p "$LOAD_PID" --any-process --mode provider,agnostic --json -i 0.5; then
  echo go >&"$LOAD_FD"
  if finish_load; then
    sleep 0.5; stop_probe
    t=$(grep '^{' "$LOAD_OUT")
    if [[ $(head -1 "$PROBE_OUT" | jq -c .modes) == '["agnostic"]' ]] && grep -q "provider mode attached" "$PROBE_ERR" &&
       [[ $(field .handshakes) == $(jq .handshakes <<<"$t") && $(field .bytes_out) == $(jq .bytes_out <<<"$t") ]]; then
      ok "$late" "$(field .handshakes) handshakes after a late attach"
    else
      bad "$late" "meta modes $(head -1 "$PROBE_OUT" | jq -c .modes), handshakes $(field .handshakes) vs $(jq .handshakes <<<"$t"), stderr: $(cat "$PROBE_ERR")"
    fi
  else
    bad "$late" "load did not finish: $(cat "$T/late.err")"; stop_probe
  fi
  end_load
else
  bad "$late" "could not start: $(cat "$T/late.err" "$T/late.perr" 2>/dev/null)"
fi

# --- JSON shape: meta first, summary last, the documented fields present ---
json_shape() {
  local f=$1 msgs=()
  [[ $(head -1 "$f" | jq -r .type) == meta ]] || msgs+=("first line is not meta")
  head -1 "$f" | jq -e '.kernel and .libbpf and .jdk and .openssl != null and (.modes|length>0)' \
    >/dev/null || msgs+=("meta lacks versions/modes")
  [[ $(tail -1 "$f" | jq -r .type) == summary ]] || msgs+=("last line is not summary")
  [[ $(jq -s '[.[] | select(.type=="interval")] | length' "$f") -gt 0 ]] || msgs+=("no interval objects")
  for k in handshakes resumed bytes_in bytes_out records_in records_out errors probe_cpu_ns lost_events; do
    tail -1 "$f" | jq -e "has(\"$k\")" >/dev/null || msgs+=("summary lacks $k")
  done
  tail -1 "$f" | jq -e '.handshake_ns | all(has("lo") and has("hi") and has("count"))' >/dev/null ||
    msgs+=("histogram buckets are not {lo,hi,count}")
  if ((${#msgs[@]})); then bad "JSON shape" "${msgs[*]}"; else ok "JSON shape"; fi
}
json_shape "$PROBE_OUT"

# --- deep mode on the driver: libssl calls seen ---
if start_load deep "$LIB" 50 200 100 1000 && start_probe deep -p "$LOAD_PID" --mode deep --json -i 0; then
  echo go >&"$LOAD_FD"; finish_load
  kill -TERM "$PROBE_PID"; wait "$PROBE_PID"
  [[ $(field .end) == SIGTERM ]] && ok "SIGTERM ends with the summary" || bad "SIGTERM ends with the summary" "last: $(tail -1 "$PROBE_OUT" | cut -c1-200)"
  r=$(field '.deep.SSL_read.calls'); w=$(field '.deep.SSL_write.calls'); h=$(field '.deep.SSL_do_handshake.calls')
  if ((r >= 200 && w >= 200 && h >= 100)); then
    ok "deep mode sees SSL_read/SSL_write/SSL_do_handshake" "$r/$w/$h calls, probe cpu $(field .probe_cpu_ns) ns"
  else bad "deep mode sees SSL_read/SSL_write/SSL_do_handshake" "calls $r/$w/$h"; fi
  end_load
else
  bad "deep mode sees SSL_read/SSL_write/SSL_do_handshake" "could not start: $(cat "$T/deep.perr" 2>/dev/null)"
fi

# --- OpenMetrics over HTTP on 127.0.0.1 ---
port=$((20000 + RANDOM % 30000))
if start_load prom "$LIB" 20 40 100 100 &&
   start_probe prom -p "$LOAD_PID" --mode provider -i 0.2 --prometheus-port "$port" --prometheus "$T/metrics.txt"; then
  echo go >&"$LOAD_FD"; finish_load; sleep 0.6
  body=$(curl -s --max-time 5 "http://127.0.0.1:$port/metrics")
  stop_probe; end_load
  if grep -q '^tlsbridge_handshakes_total{pid="[0-9]*"} 40$' <<<"$body" && [[ $(tail -1 <<<"$body") == "# EOF" ]] &&
     grep -q '^# EOF$' "$T/metrics.txt"; then
    ok "OpenMetrics on --prometheus-port and --prometheus FILE"
  else bad "OpenMetrics on --prometheus-port and --prometheus FILE" "got: $(head -c 300 <<<"$body")"; fi
else
  bad "OpenMetrics on --prometheus-port and --prometheus FILE" "could not start: $(cat "$T/prom.perr" 2>/dev/null)"
fi

# --- 3. clear errors and non-zero exits ---
expect_error() { # NAME PATTERN ARGS...
  local name=$1 pat=$2; shift 2
  local out rc
  out=$("$@" 2>&1); rc=$?
  if ((rc != 0)) && grep -qiE "$pat" <<<"$out"; then ok "$name" "exit $rc: $(head -1 <<<"$out" | cut -c1-90)"
  else bad "$name" "exit $rc, output: $out"; fi
}
bogus=$(( $(cat /proc/sys/kernel/pid_max) + 1000 ))
expect_error "error: no such PID" "no such process" "$PROBE" -p "$bogus" -d 1
sleep 30 & SLEEPER=$!; KIDS+=($SLEEPER)
expect_error "error: non-JVM PID" "not a JVM" "$PROBE" -p "$SLEEPER" --mode agnostic -d 1
expect_error "error: bad option" "unknown mode" "$PROBE" -p "$SLEEPER" --mode fast
if command -v setpriv >/dev/null; then
  expect_error "error: not root" "must run as root" setpriv --reuid=65534 --regid=65534 --clear-groups "$PROBE" -p "$SLEEPER"
fi
kill "$SLEEPER" 2>/dev/null

# --- JVM checks: a SunJSSE keep-alive server ---
JAVA=${JAVA_HOME:+$JAVA_HOME/bin/}java
if ! command -v "$JAVA" >/dev/null || ! command -v keytool >/dev/null; then
  bad "JVM checks" "no java/keytool on PATH"
  summary; exit 1
fi
keytool -genkeypair -keystore "$T/ks.p12" -storetype PKCS12 -storepass changeit -keypass changeit -alias s \
  -keyalg EC -groupname secp256r1 -dname CN=localhost -validity 2 >/dev/null 2>&1

# start_server NAME PROVIDER [CLASSPATH]: ProbeServer in a JVM; sets SRV_PID, SRV_PORT
start_server() {
  local name=$1 prov=$2 cp=${3:-}
  mkfifo "$T/$name.sin"
  exec {SRV_FD}<>"$T/$name.sin"
  "$JAVA" -Xmx256m -XX:-UseDynamicNumberOfCompilerThreads -Dsun.net.httpserver.nodelay=true \
    ${cp:+-cp "$cp"} "$HERE/ProbeServer.java" "$T/ks.p12" changeit 1024 "$prov" \
    <"$T/$name.sin" >"$T/$name.sout" 2>&1 &
  SRV_PID=$!
  KIDS+=($SRV_PID)
  for _ in $(seq 900); do grep -qs '^port' "$T/$name.sout" && break; sleep 0.1; done
  SRV_PORT=$(awk '/^port/{print $2}' "$T/$name.sout")
  [[ -n $SRV_PORT ]]
}
stop_server() { exec {SRV_FD}>&-; kill -TERM "$SRV_PID" 2>/dev/null; wait "$SRV_PID" 2>/dev/null; }
# bounded keep-alive load on 127.0.0.1
load_for() { # SECONDS
  if command -v wrk >/dev/null; then
    wrk -t1 -c4 -d"${1}s" "https://127.0.0.1:$SRV_PORT/" >"$T/wrk.out" 2>&1
  else
    local end=$((SECONDS + $1))
    while ((SECONDS < end)); do curl -sk --max-time 5 "https://127.0.0.1:$SRV_PORT/[1-200]" >/dev/null; done
  fi
}
# schedstat per live thread: "tid ns" lines
schedstat() { for t in /proc/"$SRV_PID"/task/*; do echo "${t##*/} $(cut -d' ' -f1 "$t/schedstat" 2>/dev/null)"; done; }

if start_server jsse sunjsse; then
  load_for 2 # warm up: JIT compiles now, not in the measured window
  expect_error "error: JVM without tlsbridge in provider mode" "libtlsbridge is not loaded" \
    "$PROBE" -p "$SRV_PID" --mode provider -d 1
  # --- 2. agnostic on-CPU vs schedstat over the same window ---
  # provider is requested too: on a SunJSSE JVM it must wait and say so while agnostic runs
  if start_probe agn -p "$SRV_PID" --mode provider,agnostic --json -i 1; then
    schedstat >"$T/s0"
    load_for 3
    schedstat >"$T/s1"
    stop_probe
    # both sides over the threads alive at the end (exited threads have no schedstat)
    truth=$(awk 'NR==FNR{a[$1]=$2; next} {d=$2-a[$1]; s+=d} END{printf "%.0f", s}' "$T/s0" "$T/s1")
    seen=$(tail -1 "$PROBE_OUT" | jq --slurpfile x <(awk '{print $1}' "$T/s1" | jq -s .) \
      '[.threads[] | select(.tid as $t | $x[0] | index($t)) | .on_cpu_ns] | add // 0')
    total=$(field .on_cpu_ns)
    acc=$(field .accepts); sys=$(field .syscalls); wr=$(field '.io_bytes.write | length')
    if within "$seen" "$truth" 10 && ((acc >= 1 && sys > 1000 && wr > 0)); then
      ok "agnostic on-CPU within 10% of schedstat (SunJSSE)" \
        "probe $seen ns vs schedstat $truth ns (all threads $total), syscalls $sys, accepts $acc, probe cpu $(field .probe_cpu_ns) ns"
    else
      bad "agnostic on-CPU within 10% of schedstat (SunJSSE)" \
        "probe $seen vs schedstat $truth (all $total); accepts $acc syscalls $sys write-hist $wr"
    fi
    if grep -q "libtlsbridge is not loaded" "$PROBE_ERR" && [[ $(head -1 "$PROBE_OUT" | jq -c .modes) == '["agnostic"]' ]]; then
      ok "library not loaded: agnostic still works, provider waits"
    else
      bad "library not loaded: agnostic still works, provider waits" "stderr: $(cat "$PROBE_ERR"); meta: $(head -1 "$PROBE_OUT")"
    fi
    n=$(jq -s '[.[] | select(.type=="interval")] | length' "$PROBE_OUT")
    names=$(field '[.threads[].name] | join(",")')
    if ((n >= 2)) && grep -q "pool-1-thread" <<<"$names"; then ok "agnostic intervals and thread names" "$n intervals"
    else bad "agnostic intervals and thread names" "$n intervals, names: $names"; fi
  else
    bad "agnostic on-CPU within 10% of schedstat (SunJSSE)" "probe did not attach: $(cat "$PROBE_ERR")"
  fi
  stop_server
else
  bad "SunJSSE server" "did not start: $(tail -5 "$T/jsse.sout")"
fi

# --- 1b. the same counts through a real JVM running tlsbridge ---
# the jar next to a Maven build dir (target/native -> target/), else the repo's target/
JAR=${TB_PROBE_JAR:-$(ls "$B"/../tlsbridge-*.jar "$ROOT"/target/tlsbridge-*.jar 2>/dev/null |
  grep -v -e sources -e javadoc | head -1)}
if [[ -n $JAR && -f $JAR ]]; then
  . "$HERE/jvm_check.sh"
else
  echo "NOTE: no tlsbridge jar (set TB_PROBE_JAR or build with mvn package): JVM+tlsbridge check not run"
fi

summary
((FAIL == 0))
