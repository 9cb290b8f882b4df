#!/usr/bin/env bash
# Instruction counts of the engine core under callgrind (tests/icount/icount.c,
# bench/runner/icount.py): a TLS 1.3 handshake, resumed handshakes (TLS 1.3
# ticket, TLS 1.2 ticket and session id) and 1 KiB / 16 KiB wrap+unwrap pairs
# through tlsbridge's engines, with plain OpenSSL over a BIO pair as the
# floor; and the heap calls of each, from a second build run natively. Deterministic (fixed keys and RAND), so unlike a timed benchmark a
# busy machine cannot move it: run twice, the counts must agree within 0.5%,
# and each tlsbridge count may be at most 5% above tests/icount/baseline.json.
# The baseline is per OpenSSL version (and the CPU features valgrind shows):
# another libssl build is a loud NOT RUN, not a failure. After a deliberate
# change: bench/runner/icount.py --update-baseline, and commit the file.
#
#   tests/icount/run.sh [native-build-dir]   (default target/native)
set -uo pipefail
source "$(dirname "$0")/../../scripts/lib/common.sh"
cd "$TB_ROOT"
SUITE=icount
source tests/lib/suite.sh

need_pkgs valgrind build-essential libssl-dev
BUILD=${1:-target/native}
OUT=target/icount
mkdir -p "$OUT"
rm -f "$OUT/result.json"
python3 bench/runner/icount.py --build-dir "$BUILD" --out "$OUT" --runs 2 --json "$OUT/result.json" | tee "$OUT/run.log"
RC=${PIPESTATUS[0]}
((RC == 2)) && not_run "$(sed -n 's/^NOT AVAILABLE: //p' "$OUT/run.log" | head -1)"

field() { python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$OUT/result.json" "$1"; }
check "the harness runs under callgrind and measures every operation" test -s "$OUT/result.json"
[[ -s $OUT/result.json ]] || finish
check "two runs agree within 0.5% (largest difference $(field '"%.4f%%" % (100 * r["spread"])'))" \
  python3 -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["spread"] >= 0.005)' "$OUT/result.json"
# Heap calls do not depend on valgrind's CPU or the baseline: a resumed
# connection's are OpenSSL's own but for a few of ours (2 of 434 for a TLS 1.2
# ticket, both ends, OpenSSL 3.0), so a per-connection allocation added to
# the engine or the session cache shows here.
for op in "resumed t13-ticket" "resumed t12-ticket" "resumed t12-id"; do
  h="r['heap']['$op']"
  check "tlsbridge $op: $(field "$h['tlsbridge']['allocs']") heap calls per connection, floor \
$(field "$h['openssl']['allocs']") (limit floor + 2%)" \
    python3 -c "import json, sys; r = json.load(open(sys.argv[1])); sys.exit(not $h['tlsbridge']['allocs'] <= 1.02 * $h['openssl']['allocs'])" "$OUT/result.json"
done
status=$(field 'r["baseline"]["status"]')
if [[ $status == "NOT RUN" ]]; then
  not_run "baseline comparison: $(field 'r["baseline"]["why"]')"
fi
for op in "pair 1024" "pair 16384" "handshake rsa" "handshake ec" "resumed t13-ticket" "resumed t12-ticket" "resumed t12-id"; do
  d="r['baseline']['delta'].get('$op', {}).get('tlsbridge')"
  check "tlsbridge $op: $(field "format(r['ops']['$op']['tlsbridge'], ',')") instructions, \
$(field "'%+.3f%%' % (100 * $d) if $d is not None else 'no baseline'") vs baseline (limit +5%)" \
    python3 -c "import json, sys; r = json.load(open(sys.argv[1])); sys.exit($d is None or $d > 0.05)" "$OUT/result.json"
done
finish
