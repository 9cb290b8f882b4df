#!/usr/bin/env bash
# The jar's linux-aarch64 libraries on an arm64 JDK 17 (Debian's, unpacked
# by scripts/lib/aarch64.sh) under qemu-user, for each OpenSSL flavour
# (bundled 3.5, then system: Debian's arm64 libssl.so.3):
#   - java -jar tlsbridge.jar (the self-test) names the flavour and version;
#   - TLS 1.3 and 1.2 with x86_64 peers over loopback, both directions: the
#     aarch64 tlsbridge server answers the host's OpenSSL 3.5 s_client and
#     a tlsbridge client on the host's JDK; the aarch64 tlsbridge client
#     talks to a SunJSSE server on the host's JDK;
#   - TB_AARCH64_MIB (default 100) MiB through an in-memory engine pair, the
#     SHA-256 of what was sent and what arrived compared;
#   - the engine JUnit subset (TB_AARCH64_TESTS) through surefire with the
#     arm64 JDK as -Djvm, each test case one count of the summary; by
#     default on the bundled flavour only (TB_AARCH64_JUNIT), the longest
#     part under qemu: the system flavour runs the same engine code.
# Every JVM and server is bounded in time. Anything that cannot run here
# fails the suite (NOT RUN): CI must always have this row.
#
#   tests/aarch64/run.sh                  both flavours, JUnit on bundled
#   TB_AARCH64_FLAVOURS=bundled tests/aarch64/run.sh
#   TB_AARCH64_JUNIT="bundled system" tests/aarch64/run.sh
set -uo pipefail
SUITE="aarch64 (qemu)"
NOT_RUN_RC=1
source "$(dirname "$0")/../../scripts/lib/common.sh"
source "$(dirname "$0")/../../scripts/lib/openssl.sh"
source "$(dirname "$0")/../../scripts/lib/aarch64.sh"
source "$(dirname "$0")/../lib/suite.sh"
cd "$TB_ROOT"
MIB=${TB_AARCH64_MIB:-100}
FLAVOURS=${TB_AARCH64_FLAVOURS:-bundled system}
JUNIT=${TB_AARCH64_JUNIT:-bundled}
TESTS=${TB_AARCH64_TESTS:-'Engine*Test,Contract*Test,Provider*Test,TrustTest,NativePlatformTest'}
T0=$SECONDS

need_aarch64_pkgs
suite_jar
# ELF e_machine 183 = AArch64.
python3 - "$JAR" <<'PY' || not_run "the jar lacks its aarch64 libraries (built with -Dtlsbridge.aarch64.skip=true?)"
import struct, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
for f in ("libtlsbridge-bundled.so", "libtlsbridge.so"):
    try:
        head = z.read("META-INF/native/linux-aarch64/" + f)[:20]
    except KeyError:
        sys.exit(print("no META-INF/native/linux-aarch64/" + f))
    if head[:4] != b"\x7fELF" or struct.unpack("<H", head[18:20])[0] != 183:
        sys.exit(print("META-INF/native/linux-aarch64/" + f + " is not an AArch64 ELF"))
PY
ROOT=$(tb_arm64_root) || not_run "no arm64 root (scripts/aarch64 root)"
WORK=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$WORK"' EXIT
tb_arm64_java "$ROOT" "$WORK/jdk"
AJAVA=$WORK/jdk/bin/java
OSSL=$(tb_openssl 3.5)/bin/openssl
[[ -x $OSSL ]] || not_run "no OpenSSL 3.5 apps (scripts/openssl 3.5)"
"$AJAVA" -version 2>&1 | grep -q 'OpenJDK 64-Bit' || not_run "the arm64 JDK does not start under qemu: $("$AJAVA" -version 2>&1 | tail -2)"

# Peer.java, compiled once on the host, runs on both JDKs; a CA and a
# localhost server key in PKCS#12 for both.
mkdir -p "$WORK/classes" &&
  javac --release 17 -cp "$JAR" -d "$WORK/classes" tests/aarch64/Peer.java || not_run "cannot compile tests/aarch64/Peer.java"
(cd "$WORK" && suite_ca >/dev/null 2>&1 &&
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout server.key -subj /CN=localhost \
    -addext subjectAltName=DNS:localhost,IP:127.0.0.1 -out server.csr 2>/dev/null &&
  openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -copy_extensions copy \
    -out server.pem 2>/dev/null &&
  openssl pkcs12 -export -inkey server.key -in server.pem -passout pass:changeit -out server.p12) ||
  not_run "cannot make the test keys"
CP=$WORK/classes:$JAR

# aarch64 JVM under qemu: the run.sh checks give each a few minutes.
ajava() { timeout 600 "$AJAVA" -Dtlsbridge.openssl="$FLAVOUR" -cp "$CP" "$@"; }
hjava() { timeout 120 java -cp "$CP" "$@"; }

# start_server LOG CMD...: runs a Peer server in the background, waits for its PORT line.
# LOG is emptied first: the background shell may not have truncated it yet
# when it is first read, and the previous flavour's PORT line would be taken.
start_server() {
  local log=$1 i
  shift
  : >"$log"
  "$@" >"$log" 2>&1 &
  SERVER_PID=$!
  for ((i = 0; i < 600; i++)); do
    PORT=$(sed -n 's/^PORT //p' "$log")
    [[ -n $PORT ]] && return 0
    kill -0 "$SERVER_PID" 2>/dev/null || return 1
    sleep 0.5
  done
  return 1
}
# stop_server: a minute for the server to finish its connections, then it is killed.
stop_server() {
  local i
  for ((i = 0; i < 120; i++)); do
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.5
  done
  kill "$SERVER_PID" 2>/dev/null
  wait "$SERVER_PID" 2>/dev/null
}

for FLAVOUR in $FLAVOURS; do
  t0=$SECONDS
  if [[ $FLAVOUR == bundled ]]; then
    want_version="OpenSSL 3.5." want_flavour="bundled"
  else
    want_version="OpenSSL 3.0." want_flavour="system (libssl.so.3)"
  fi
  echo "== $FLAVOUR flavour on $("$AJAVA" -version 2>&1 | sed -n 2p)"

  out=$(ajava -jar "$JAR" 2>&1)
  echo "$out" | sed 's/^/  /'
  check "$FLAVOUR: java -jar tlsbridge.jar on aarch64 serves $want_version ($want_flavour)" \
    grep -q "^openssl $want_version.* ($want_flavour;" <<<"$out"
  check "$FLAVOUR: the self-test's ClientHello" grep -q '^self-test: ClientHello of [0-9]* bytes' <<<"$out"

  # aarch64 server, x86_64 clients: s_client 1.3 and 1.2, then a tlsbridge client on the host's JDK.
  if start_server "$WORK/server.log" ajava Peer server tlsbridge "$WORK/server.p12" "$WORK/ca.pem" 4; then
    for v in 1.3 1.2; do
      out=$(echo "ping s_client" | timeout 120 "$OSSL" s_client -quiet -connect "127.0.0.1:$PORT" -servername localhost \
        -tls${v/./_} -CAfile "$WORK/ca.pem" -verify_return_error -verify_hostname localhost 2>&1)
      check "$FLAVOUR: aarch64 server, x86_64 OpenSSL 3.5 s_client, TLS $v ($(grep '^pong' <<<"$out" || tail -1 <<<"$out"))" \
        grep -q "^pong TLSv$v " <<<"$out"
    done
    out=$(hjava Peer client tlsbridge "$WORK/ca.pem" "$PORT" TLSv1.3,TLSv1.2 2>&1)
    for v in 1.3 1.2; do
      check "$FLAVOUR: aarch64 server, x86_64 tlsbridge client, TLS $v" grep -q "^CLIENT TLSv$v TLSv$v pong TLSv$v " <<<"$out"
    done
    stop_server
    sed 's/^/  /' "$WORK/server.log"
    check "$FLAVOUR: the aarch64 server saw 4 connections" test "$(grep -c "^SERVER got 'ping" "$WORK/server.log")" -eq 4
  else
    check "$FLAVOUR: aarch64 server starts ($(tail -3 "$WORK/server.log"))" false
  fi

  # x86_64 SunJSSE server, aarch64 tlsbridge client.
  if start_server "$WORK/hserver.log" hjava Peer server SunJSSE "$WORK/server.p12" "$WORK/ca.pem" 2; then
    out=$(ajava Peer client tlsbridge "$WORK/ca.pem" "$PORT" TLSv1.3,TLSv1.2 2>&1)
    echo "$out" | sed 's/^/  /'
    for v in 1.3 1.2; do
      check "$FLAVOUR: aarch64 tlsbridge client, x86_64 SunJSSE server, TLS $v" \
        grep -q "^CLIENT TLSv$v TLSv$v pong TLSv$v " <<<"$out"
    done
    stop_server
  else
    check "$FLAVOUR: x86_64 SunJSSE server starts ($(tail -3 "$WORK/hserver.log"))" false
  fi

  out=$(ajava Peer pair "$WORK/server.p12" "$WORK/ca.pem" "$MIB" 2>&1)
  echo "$out" | sed 's/^/  /'
  sent=$(sed -n 's/^PAIR sent //p' <<<"$out"); got=$(sed -n 's/^PAIR received //p' <<<"$out")
  check "$FLAVOUR: $MIB MiB through an aarch64 engine pair, SHA-256 equal ($(sed -n 's/^PAIR [0-9]* MiB in //p' <<<"$out"))" \
    test -n "$sent" -a "$sent" = "$got"

  # The engine JUnit subset, surefire forking the arm64 JDK.
  if [[ " $JUNIT " != *" $FLAVOUR "* ]]; then
    echo "== $FLAVOUR flavour: $((SECONDS - t0)) s (JUnit subset not run on it: TB_AARCH64_JUNIT=\"$JUNIT\")"
    continue
  fi
  rm -rf target/surefire-reports
  timeout 1800 mvn -B -q surefire:test -Djvm="$AJAVA" -Dtest="$TESTS" -Dsurefire.failIfNoSpecifiedTests=false \
    -Dtlsbridge.openssl="$FLAVOUR" -Dtlsbridge.test.expectOpenssl="$want_version" \
    -Dtlsbridge.test.expectFlavour="$want_flavour" -Dsurefire.timeout=1500 >"$WORK/junit.log" 2>&1
  rc=$?
  read -r n bad < <(python3 - target/surefire-reports <<'PY'
import glob, sys, xml.etree.ElementTree as ET
t = b = 0
for path in glob.glob(sys.argv[1] + "/TEST-*.xml"):
    r = ET.parse(path).getroot()
    t += int(r.get("tests", 0)) - int(r.get("skipped", 0) or 0)
    b += int(r.get("failures", 0)) + int(r.get("errors", 0))
print(t, b)
PY
  )
  rm -rf "target/surefire-aarch64-$FLAVOUR" && mv target/surefire-reports "target/surefire-aarch64-$FLAVOUR" 2>/dev/null
  grep -E 'Tests run:|FAIL|ERROR' "$WORK/junit.log" | head -20 | sed 's/^/  /'
  PASS=$((PASS + n - bad))
  FAIL=$((FAIL + bad))
  echo "$FLAVOUR: JUnit ($TESTS) on the arm64 JDK: $n run, $bad failed (mvn exit $rc)"
  check "$FLAVOUR: the JUnit subset ran on the arm64 JDK (mvn exit $rc, $n tests)" test "$rc" -eq 0 -a "$n" -gt 0
  echo "== $FLAVOUR flavour: $((SECONDS - t0)) s"
done
echo "NOTE $((SECONDS - T0)) s under qemu; flavours $FLAVOURS; $MIB MiB pairs; JUnit subset on $JUNIT"
finish
