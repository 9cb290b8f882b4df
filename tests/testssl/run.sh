#!/usr/bin/env bash
# testssl.sh (Debian's package) against the project's embedded Tomcat
# (bench/server's BenchServer) with DEFAULT TLS settings: no ciphers, no
# protocols, one RSA certificate. Scanned twice on 127.0.0.1, once through
# tlsbridge (TlsBridgeImplementation) and once through Tomcat's default
# JSSEImplementation on SunJSSE, then summarized side by side.
#
# Two modes:
#   tests/testssl/run.sh [native-build-dir]   (scripts/test, CI: about 1.5 min)
#       scans tlsbridge only, into a temporary directory, and compares it
#       with the committed SunJSSE scan (tests/testssl/results/sunjsse.json);
#   tests/testssl/run.sh --full [--out DIR]   (on demand: about 4 min)
#       scans both and rewrites tests/testssl/results/ (or DIR): summary.md,
#       both JSON files, both logs, and commands.txt with the exact commands.
#
# Checks (each a PASS/FAIL line, then `SUMMARY testssl: N passed, M failed`):
#   - the scans completed and produced JSON;
#   - tlsbridge has no finding of severity MEDIUM, HIGH or CRITICAL and no
#     "VULNERABLE" among protocols, cipher categories and suites, forward
#     secrecy and the vulnerability checks (findings about the test
#     certificate, the servlet's HTTP headers and server cipher order are
#     listed in the summary with both servers' values);
#   - tlsbridge is nowhere weaker than SunJSSE: no testssl finding id has a
#     higher severity (LOW < MEDIUM < HIGH < CRITICAL) for tlsbridge;
#   - stricter: tlsbridge has not even a LOW finding in those sections (a CBC
#     suite in the defaults would show as LUCKY13 "potentially vulnerable").
#
# testssl.sh 3.0.8 (the Debian 12 package) has no overall grade; the summary
# says so and compares finding by finding.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../../scripts/lib/common.sh"
cd "$TB_ROOT"

SUITE=testssl
NOT_RUN_RC=1
source "$HERE/../lib/suite.sh"
RESULTS=$HERE/results
OUT=
FULL=0
while (($#)); do
  case $1 in
    --full) FULL=1; shift ;;
    --out) OUT=$2; shift 2 ;;
    *) shift ;; # the native build dir scripts/test passes: the jar carries the library
  esac
done

need_pkgs testssl.sh openssl python3 maven openjdk-17-jdk-headless || not_run "cannot install testssl.sh"
TESTSSL=$(command -v testssl || command -v testssl.sh) || not_run "no testssl binary after installing testssl.sh"
export JAVA_HOME=${JAVA_HOME:-$(jdk17_home)}
JAVA=$JAVA_HOME/bin/java

JAR=$(ls target/tlsbridge-*.jar 2>/dev/null | grep -v -e sources -e javadoc | head -1)
if [[ -z $JAR ]]; then
  log "no tlsbridge jar in target/: packaging it"
  mvn -B -q -DskipTests -DskipCtest=true package >/dev/null 2>&1
  JAR=$(ls target/tlsbridge-*.jar 2>/dev/null | grep -v -e sources -e javadoc | head -1)
fi
[[ -n $JAR ]] || not_run "cannot build the tlsbridge jar"

WORK=$(mktemp -d /tmp/tlsbridge-testssl.XXXXXX)
SERVER_PID=
stop_server() {
  [[ -n $SERVER_PID ]] || return 0
  kill "$SERVER_PID" 2>/dev/null
  for _ in $(seq 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$SERVER_PID" 2>/dev/null
  wait "$SERVER_PID" 2>/dev/null
  SERVER_PID=
}
cleanup() { stop_server; rm -rf "$WORK"; }
trap cleanup EXIT

# --- the embedded Tomcat of bench/server, compiled against this tree's jar ---
mvn -B -q dependency:build-classpath -Dmdep.includeScope=provided -Dmdep.includeGroupIds=org.apache.tomcat,org.apache.tomcat.embed -Dmdep.outputFile="$WORK/cp.txt" >"$WORK/mvn.log" 2>&1 \
  || { cat "$WORK/mvn.log"; not_run "cannot resolve Tomcat's class path"; }
# bench/server's PeerProviders names Conscrypt's and ACCP's classes (the bench's peer variants)
for a in software.amazon.cryptools:AmazonCorrettoCryptoProvider:2.4.1:jar:linux-x86_64 org.conscrypt:conscrypt-openjdk-uber:2.5.2; do
  mvn -B -q dependency:get -Dartifact=$a -Dtransitive=false >>"$WORK/mvn.log" 2>&1 \
    || { cat "$WORK/mvn.log"; not_run "cannot fetch $a"; }
done
M2=$HOME/.m2/repository
CP=$(cat "$WORK/cp.txt"):$TB_ROOT/$JAR:$M2/software/amazon/cryptools/AmazonCorrettoCryptoProvider/2.4.1/AmazonCorrettoCryptoProvider-2.4.1-linux-x86_64.jar:$M2/org/conscrypt/conscrypt-openjdk-uber/2.5.2/conscrypt-openjdk-uber-2.5.2.jar
mkdir -p "$WORK/classes"
"$JAVA_HOME/bin/javac" -d "$WORK/classes" -cp "$CP" bench/server/src/main/java/org/tlsbridge/bench/server/*.java \
  >"$WORK/javac.log" 2>&1 || { cat "$WORK/javac.log"; not_run "cannot compile bench/server"; }
TOMCAT=$(sed -n 's|.*/tomcat-embed-core-\([0-9.]*\)\.jar.*|\1|p' "$WORK/cp.txt")

# --- one RSA certificate for both servers, from a CA testssl is told about ---
PKI=$WORK/pki
mkdir -p "$PKI"
(
  cd "$PKI" || exit 1
  openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 400 -subj "/CN=tlsbridge testssl CA" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
  openssl req -newkey rsa:2048 -nodes -keyout server.key -subj /CN=localhost -out server.csr
  printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n' >ext
  openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 365 -sha256 -extfile ext \
    -out server.pem
) >"$WORK/pki.log" 2>&1 || { cat "$WORK/pki.log"; not_run "openssl could not make the test PKI"; }

if ((FULL)); then
  OUT=${OUT:-$RESULTS}
else
  OUT=${OUT:-$WORK/results}
  [[ -s $RESULTS/sunjsse.json ]] || not_run "no committed SunJSSE scan in $RESULTS (run tests/testssl/run.sh --full)"
fi
mkdir -p "$OUT"
: >"$OUT/commands.txt"
# What testssl runs: protocols, standard cipher categories, forward secrecy,
# server defaults, server preference, every vulnerability check, HTTP
# headers, and each cipher per protocol (-E) so the summary lists suites.
TESTSSL_FLAGS=(--quiet --color 0 --warnings batch --ip 127.0.0.1 --add-ca "$PKI/ca.pem"
  --connect-timeout 10 --openssl-timeout 10 -p -s -f -S -P -U -h -E)

scan() { # impl name
  local impl=$1 name=$2 port log
  log "scanning $name (Tomcat $TOMCAT, --impl $impl)"
  "$JAVA" -Xmx512m -cp "$WORK/classes:$CP" org.tlsbridge.bench.server.BenchServer --impl "$impl" --port 0 \
    --cert "$PKI/server.pem" --key "$PKI/server.key" >"$WORK/$name-server.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 300); do
    port=$(sed -n 's/^BENCH-LISTENING //p' "$WORK/$name-server.log")
    [[ -n $port ]] && break
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  if [[ -z $port ]]; then
    cat "$WORK/$name-server.log"
    stop_server
    return 1
  fi
  rm -f "$OUT/$name.json" "$OUT/$name.log"
  local cmd=("$TESTSSL" "${TESTSSL_FLAGS[@]}" --jsonfile "$OUT/$name.json" --logfile "$OUT/$name.log"
    "https://localhost:$port/1024")
  # the command as it ran, with the temporary paths named for what they are
  printf '%s: (server: java -cp <bench/server classes>:<Tomcat %s>:%s org.tlsbridge.bench.server.BenchServer --impl %s --cert server.pem --key server.key)\n  %s\n' \
    "$name" "$TOMCAT" "$JAR" "$impl" "$(printf '%q ' "${cmd[@]}" | sed "s|$PKI/|<pki>/|g; s|$OUT/|results/|g")" \
    >>"$OUT/commands.txt"
  local t0=$SECONDS
  timeout 300 "${cmd[@]}" >"$WORK/$name.stdout" 2>&1
  local rc=$?
  echo "$name: testssl exit $rc after $((SECONDS - t0)) s" | tee -a "$OUT/commands.txt"
  grep -q "BENCH-INFO" "$WORK/$name-server.log" && sed -n 's/^BENCH-INFO //p' "$WORK/$name-server.log" \
    | sed "s/^/  server: /" >>"$OUT/commands.txt"
  stop_server
  # testssl's exit code counts findings; a scan that wrote its JSON completed
  [[ $rc -ne 124 && -s $OUT/$name.json ]]
}

T0=$SECONDS
check "testssl scan of Tomcat + tlsbridge completed" scan tlsbridge tlsbridge
if ((FULL)); then
  check "testssl scan of Tomcat + SunJSSE completed" scan jsse sunjsse
  SUN=$OUT/sunjsse.json
  BASELINE=()
else
  SUN=$RESULTS/sunjsse.json
  BASELINE=(--baseline)
fi
log "scans: $((SECONDS - T0)) s"
# testssl's own log starts with the machine's host name and paths; keep the findings
for f in "$OUT"/tlsbridge.log "$OUT"/sunjsse.log; do
  [[ -f $f ]] && sed -i -e "s|$PKI/|<pki>/|g" -e "s|$OUT/|results/|g" "$f"
done

python3 "$HERE/summarize.py" --java "$("$JAVA" -version 2>&1 | head -1)" --tomcat "$TOMCAT" \
  --testssl "testssl.sh $(dpkg-query -W -f='${Version}' testssl.sh 2>/dev/null)" \
  --openssl "$(openssl version)" --seconds "$((SECONDS - T0))" \
  "${BASELINE[@]}" "$OUT/tlsbridge.json" "$SUN" >"$OUT/summary.md"
rc=$?
cat "$OUT/summary.md"
check "tlsbridge: no MEDIUM/HIGH/CRITICAL or VULNERABLE finding" test $((rc & 1)) -eq 0
check "tlsbridge: no finding more severe than SunJSSE's" test $((rc & 2)) -eq 0
check "summary written" test $((rc & 4)) -eq 0
check "tlsbridge: protocol, cipher, FS and vulnerability findings all OK or INFO" test $((rc & 8)) -eq 0
finish
