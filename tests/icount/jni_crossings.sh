#!/usr/bin/env bash
# JNI crossings per server handshake (full and resumed, TLS 1.3 and 1.2),
# counted, not timed: a uprobe on every function of the registration tables
# (native/jni/*.c, TB_N entries) of a private copy of the library, while
# SessionCost (java/src/test) makes a SunJSSE client connect to a tlsbridge
# server engine in memory. Each mode runs twice after the same warm-up, with
# 100 and with 0 more connections; the difference / 100 is printed per
# function. engine_free is left out of the totals (it runs when the cleaner
# does), state (getHandshakeStatus polls by the caller) is shown apart.
# Names that are not one symbol in the library (the socket's sock_*, which
# an engine never calls) are skipped, with a note on stderr.
# Needs root (tracefs) and perf; build first (mvn package -DskipTests).
#
#   tests/icount/jni_crossings.sh [libtlsbridge.so]   (default: the bundled flavour in target/)
set -euo pipefail
cd "$(dirname "$0")/../.."
LIB=${1:-target/native/native/libtlsbridge-bundled.so}
T=/sys/kernel/tracing
WORK=$(mktemp -d /tmp/tb-crossings.XXXXXX)
JAVA=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}/bin/java
mvn -B -q -o dependency:build-classpath -Dmdep.outputFile="$WORK/cp" >/dev/null
CP=target/classes:target/test-classes:$(cat "$WORK/cp")
NAMES=$(grep -ho 'TB_N("[A-Za-z0-9]*", "[^"]*", [a-z_0-9]*)' native/jni/*.c | sed 's/.*, \([a-z_0-9]*\))$/\1/' | sort -u)
GROUP=tbcross$$

count() { # mode protocol n -> "count function" lines
  local lib=$WORK/lib-$1-$2-$3.so evs=()
  cp "$LIB" "$lib"
  for n in $NAMES; do
    a=$(nm "$lib" | awk -v n="$n" '$3 == n && ($2 == "t" || $2 == "T") {print $1}')
    [[ -n $a && $(wc -l <<<"$a") == 1 ]] || { echo "no single symbol for $n" >&2; continue; }
    echo "p:$GROUP/$n $lib:0x$a" >>$T/uprobe_events
    evs+=("$GROUP:$n")
  done
  perf stat -x, -e "$(IFS=,; echo "${evs[*]}")" -o "$WORK/stat" -- "$JAVA" -Dtlsbridge.skipBuildCheck=true \
    -Dtlsbridge.library.path="$lib" -cp "$CP" org.tlsbridge.engine.SessionCost "$2" "$1" "$3" >/dev/null || true
  for e in "${evs[@]}"; do echo "-:${e/://}" >>$T/uprobe_events; done
  awk -F, -v g="$GROUP:" '$1 + 0 > 0 {sub(g, "", $3); print $1, $3}' "$WORK/stat"
}

for p in TLSv1.3 TLSv1.2; do
  for m in full resumed; do
    count $m $p 100 >"$WORK/a"
    count $m $p 0 >"$WORK/b"
    python3 - "$WORK/a" "$WORK/b" "$p $m" <<'PY'
import sys
rd = lambda p: {n: int(c) for c, n in (l.split() for l in open(p))}
a, b = rd(sys.argv[1]), rd(sys.argv[2])
d = {k: (a.get(k, 0) - b.get(k, 0)) / 100 for k in set(a) | set(b)}
d = {k: v for k, v in sorted(d.items()) if v and k != "engine_free"}
rest = sum(v for k, v in d.items() if k != "state")
print(f"{sys.argv[3]}: {rest:.2f} crossings per server handshake + {d.get('state', 0):.2f} state polls;",
      {k: v for k, v in d.items() if k != "state"})
PY
  done
done
rm -rf "$WORK"
