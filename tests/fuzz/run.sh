#!/usr/bin/env bash
# libFuzzer campaign over the engine core (tests/fuzz/README.md): builds the
# fuzzers with clang in target/fuzz, runs each target from a fresh copy of
# the committed corpus, and fails on any crash, leak, timeout, OOM or
# sanitizer report (libFuzzer writes an artifact and exits non-zero).
#
#   tests/fuzz/run.sh [native-build-dir]
#   TB_FUZZ_SECONDS  total fuzzing budget in CPU seconds (default 60), split
#                    server 2/5, client 2/5, pem 1/5
#   TB_FUZZ_JOBS     targets run at once (default 1)
#   TB_FUZZ_CPU=1    count the budget in CPU time used, not wall time (a shared,
#                    busy machine); TB_FUZZ_WALL caps the wall time per target
#                    (default 4x its share); a target that reaches its share
#                    is stopped with SIGINT (libFuzzer prints its stats and
#                    exits 72, which counts as a pass only for that stop)
set -uo pipefail
source "$(dirname "$0")/../../scripts/lib/common.sh"
cd "$TB_ROOT"

TOTAL=${TB_FUZZ_SECONDS:-60}
JOBS=${TB_FUZZ_JOBS:-1}
CPU=${TB_FUZZ_CPU:-0}
HZ=$(getconf CLK_TCK)
BUILD=target/fuzz
OUT=$BUILD/run
need_pkgs clang libclang-rt-14-dev cmake libssl-dev

log "building the fuzzers ($BUILD)"
if ! { cmake -S . -B "$BUILD" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTB_SANITIZE=ON \
         -DTB_BUILD_FUZZ=ON -DTB_BUILD_TESTS=OFF -DTB_BUILD_PROBE=OFF >/dev/null &&
       cmake --build "$BUILD" -j2 --target fuzz_server fuzz_client fuzz_pem gen_corpus >/dev/null; }; then
  echo "NOT RUN: the fuzzers do not build"
  exit 1
fi
rm -rf "$OUT" && mkdir -p "$OUT"

# Writes $OUT/<t>.log and $OUT/<t>.rc; the working corpus is $OUT/<t>.corpus.
# $OUT/<t>.cpu is the CPU time the target used (sampled every 2 s).
fuzz_one() { # target seconds
  local t=$1 s=$2 wall=$2 pid used=0 stopped=0 rc
  ((CPU)) && wall=${TB_FUZZ_WALL:-$((s * 4))}
  cp -r "tests/fuzz/corpus/$t" "$OUT/$t.corpus"
  "$BUILD/tests/fuzz/$t" -max_total_time="$wall" -max_len=24576 -timeout=30 -rss_limit_mb=2560 \
    -print_final_stats=1 -artifact_prefix="$OUT/$t-" "$OUT/$t.corpus" \
    >"$OUT/$t.log" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    used=$(awk -v hz="$HZ" '{printf "%.1f", ($14 + $15) / hz}' "/proc/$pid/stat" 2>/dev/null || echo "$used")
    echo "$used" >"$OUT/$t.cpu"
    if ((CPU && ${used%.*} >= s)); then
      kill -INT "$pid"
      stopped=1
      break
    fi
    sleep 2
  done
  wait "$pid"
  rc=$?
  ((stopped && rc == 72)) && rc=0 # libFuzzer 14 has no -interrupted_exit_code
  echo "$rc" >"$OUT/$t.rc"
}

declare -A SECS=([fuzz_server]=$((TOTAL * 2 / 5)) [fuzz_client]=$((TOTAL * 2 / 5)) [fuzz_pem]=$((TOTAL / 5)))
for t in fuzz_server fuzz_client fuzz_pem; do
  ((SECS[$t] < 1)) && SECS[$t]=1
  log "fuzzing $t for ${SECS[$t]} s"
  fuzz_one "$t" "${SECS[$t]}" &
  while (($(jobs -rp | wc -l) >= JOBS)); do wait -n; done
done
wait

PASS=0
FAIL=0
EXECS=0
NOTE=
for t in fuzz_server fuzz_client fuzz_pem; do
  log=$OUT/$t.log
  rc=$(cat "$OUT/$t.rc" 2>/dev/null || echo 99)
  runs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+)/\1/p' "$log" | tail -1)
  rate=$(sed -nE 's/^stat::average_exec_per_sec: *([0-9]+)/\1/p' "$log" | tail -1)
  added=$(sed -nE 's/^stat::new_units_added: *([0-9]+)/\1/p' "$log" | tail -1)
  cov=$(grep -E '^#[0-9]+[[:space:]]+(DONE|pulse|NEW|REDUCE|INITED)' "$log" | tail -1 | sed -nE 's/.*cov: ([0-9]+) ft: ([0-9]+).*/cov \1, ft \2/p')
  seeds=$(find "tests/fuzz/corpus/$t" -type f | wc -l)
  corpus=$(find "$OUT/$t.corpus" -type f | wc -l)
  # slow-unit-* files are inputs that took > 10 s (a loaded machine); a real
  # hang is a timeout-* (-timeout=30)
  artifacts=$(find "$OUT" -maxdepth 1 -type f \( -name "$t-crash-*" -o -name "$t-leak-*" -o -name "$t-timeout-*" \
    -o -name "$t-oom-*" -o -name "$t-minimized-*" \) | wc -l)
  slow=$(find "$OUT" -maxdepth 1 -name "$t-slow-unit-*" -type f | wc -l)
  cpu=$(cat "$OUT/$t.cpu" 2>/dev/null || echo "?")
  EXECS=$((EXECS + ${runs:-0}))
  NOTE+="${NOTE:+; }${t#fuzz_} ${runs:-?} execs, corpus $corpus"
  line="$t: ${SECS[$t]} s, ${cpu} CPU s, ${runs:-?} execs (${rate:-?}/s), ${cov:-cov ?}, corpus $seeds -> $corpus (+${added:-?})"
  ((slow)) && line+=", $slow slow unit(s)"
  if [[ $rc == 0 && $artifacts == 0 && -n $runs ]]; then
    echo "PASS $line"
    PASS=$((PASS + 1))
  else
    echo "FAIL $line, exit $rc, $artifacts artifact(s) in $OUT"
    grep -E '^==[0-9]+==ERROR|^SUMMARY: |runtime error|contract broken|^==[0-9]+== ERROR' "$log" | head -5
    FAIL=$((FAIL + 1))
  fi
done
echo "NOTE ${TOTAL} s, $EXECS execs: $NOTE"
echo "SUMMARY fuzz: $PASS passed, $FAIL failed"
((FAIL == 0))
