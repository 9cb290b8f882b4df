#!/usr/bin/env bash
# Instruction counts of the engine core under callgrind (tests/icount/icount.c,
# bench/runner/icount.py): a TLS 1.3 handshake, resumed handshakes (TLS 1.3
# ticket, TLS 1.2 ticket and session id) and 1 KiB / 16 KiB wrap+unwrap pairs
# (and 1 KiB over TLS 1.2) through tlsbridge's engines, with plain OpenSSL
# over a BIO pair as the floor; a native socket server's keep-alive request
# (read ~100 bytes, write 1 KiB, TLS 1.3 and 1.2, loopback TCP;
# tests/icount/icount_socket.c), with OpenSSL on the descriptor (reading
# ahead: one recv per request, as tlsbridge's socket) as the floor;
# and the heap calls of each, from a second build run natively; for
# the bundled flavour's core (OpenSSL 3.5 linked in) and the system one's.
# Deterministic (fixed keys and RAND), so unlike a timed benchmark a
# busy machine cannot move it: run twice, the counts must agree within 0.5%,
# and each tlsbridge count may be at most 5% above tests/icount/baseline.json.
# The baseline is per flavour and OpenSSL version (and the CPU features
# valgrind shows): another libssl build is a loud NOT RUN, not a failure.
# After a deliberate change: bench/runner/icount.py --update-baseline, and
# commit the file.
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
((RC == 2)) && not_run "$(python3 -c 'import json, sys
print("; ".join("%s flavour: %s" % (f, r["reason"]) for f, r in json.load(open(sys.argv[1])).items()))' "$OUT/result.json")"

# holds FLAVOUR EXPR: EXPR, evaluated on that flavour's result r, is true;
# field FLAVOUR EXPR: prints it.
holds() { python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))[sys.argv[2]]; sys.exit(not eval(sys.argv[3]))' "$OUT/result.json" "$1" "$2"; }
field() { python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))[sys.argv[2]]; print(eval(sys.argv[3]))' "$OUT/result.json" "$1" "$2"; }
check "icount.py writes its results" test -s "$OUT/result.json"
[[ -s $OUT/result.json ]] || finish
# Each flavour on its own OpenSSL: bundled (the jar's default, OpenSSL 3.5
# linked in) and system (the host's libssl). One this build lacks (built with
# -DTB_FLAVOURS=OFF, its OpenSSL cache gone) is a NOT RUN line, the other is
# still checked; the bundled one has its own baseline entries.
for fl in $(python3 -c 'import json, sys; print(*json.load(open(sys.argv[1])))' "$OUT/result.json"); do
  if holds "$fl" 'r.get("not_available")'; then
    echo "NOT RUN: $SUITE: $fl flavour: $(field "$fl" 'r["reason"]')"
    continue
  fi
  check "$fl: the harness runs under callgrind and measures every operation ($(field "$fl" 'r.get("openssl") or r["reason"].splitlines()[0]'))" \
    holds "$fl" 'r["ok"]'
  holds "$fl" 'r["ok"]' || continue
  check "$fl: two runs agree within 0.5% (largest difference $(field "$fl" '"%.4f%%" % (100 * r["spread"])'))" \
    holds "$fl" 'r["spread"] < 0.005'
  # Heap calls do not depend on valgrind's CPU or the baseline: a resumed
  # connection's are OpenSSL's own but for a few of ours (2 of 434 for a TLS 1.2
  # ticket, both ends, OpenSSL 3.0), so a per-connection allocation added to
  # the engine or the session cache shows here.
  for op in "resumed t13-ticket" "resumed t12-ticket" "resumed t12-id"; do
    h="r['heap']['$op']"
    check "$fl: tlsbridge $op: $(field "$fl" "$h['tlsbridge']['allocs']") heap calls per connection, floor \
$(field "$fl" "$h['openssl']['allocs']") (limit floor + 2%)" \
      holds "$fl" "$h['tlsbridge']['allocs'] <= 1.02 * $h['openssl']['allocs']"
  done
  if [[ $(field "$fl" 'r["baseline"]["status"]') == "NOT RUN" ]]; then
    echo "NOT RUN: $SUITE: $fl flavour: baseline comparison: $(field "$fl" 'r["baseline"]["why"]')"
    continue
  fi
  for op in "pair 1024" "pair 16384" "pair t12 1024" "handshake rsa" "handshake ec" "resumed t13-ticket" "resumed t12-ticket" "resumed t12-id" \
            "socket 1024" "socket t12 1024"; do
    d="r['baseline']['delta'].get('$op', {}).get('tlsbridge')"
    check "$fl: tlsbridge $op: $(field "$fl" "format(r['ops']['$op']['tlsbridge'], ',')") instructions, \
$(field "$fl" "'%+.3f%%' % (100 * $d) if $d is not None else 'no baseline'") vs baseline (limit +5%)" \
      holds "$fl" "$d is not None and $d <= 0.05"
  done
done
finish
