#!/usr/bin/env bash
# tlsbridge's native SSLSocket/SSLServerSocket on virtual threads (JDK 25, the
# virtual-thread scheduler's parallelism at 2, so two pinned carriers stop it):
#   - a virtual-thread-per-connection server (VtServer) over tlsbridge's
#     SSLServerSocket, its accept loop on a platform thread and on a virtual
#     thread, and the same over SunJSSE as the control: 500 clients connect
#     and stay silent (the server waits in the handshake) and 50 finish the
#     handshake and stay silent (it waits in a read); then 100 clients at once
#     each get a reply, all within 10 s. While the idle clients wait, no
#     carrier thread may be inside a tlsbridge native call (jcmd Thread.print),
#     and JFR, recording from after a first request to the end of the load,
#     records no jdk.VirtualThreadPinned event with a tlsbridge frame. (JFR
#     alone would miss the old failure: a thread blocked in a native recv()
#     never tries to park, so no pinned event is written; the carriers'
#     stacks show it.)
#   - Helidon 4.5.0's web server (every connection on a virtual thread) with TLS
#     from a tlsbridge SSLContext: curl and Java's HttpClient over TLS 1.2 and
#     1.3 with 500 silent clients connected, the served socket and session
#     being tlsbridge's, the same carrier and JFR checks.
#   - timeouts and close from another thread (VtSemantics): each case on a
#     platform thread and a virtual thread, same outcome.
#
#   tests/vthreads/run.sh [native-build-dir]   (the JVM side comes from target/classes)
set -uo pipefail
SUITE=vthreads
NOT_RUN_RC=1
source "$(dirname "$0")/../lib/suite.sh"

J25=$(jdk25_home)
[[ -n $J25 ]] || NOT_RUN_RC=0 not_run "virtual-thread tests need JDK 21+; no Temurin 25 under /usr/lib/jvm"
need_pkgs curl openssl
suite_classes || not_run "the build failed"

suite_work vthreads
trap '' PIPE

# Helidon 4.5.0 and what it needs, from Maven Central, into target/ (kept between runs).
HELIDON=target/vthreads-helidon
if [[ ! -f $HELIDON/helidon-webserver-4.5.0.jar ]]; then
  mkdir -p "$HELIDON"
  cat >"$WORK/helidon-pom.xml" <<'POM'
<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
  <groupId>org.tlsbridge.tests</groupId><artifactId>vthreads-helidon</artifactId><version>1</version>
  <dependencies><dependency><groupId>io.helidon.webserver</groupId><artifactId>helidon-webserver</artifactId>
    <version>4.5.0</version></dependency></dependencies></project>
POM
  mvn -B -q -f "$WORK/helidon-pom.xml" dependency:copy-dependencies -DoutputDirectory="$PWD/$HELIDON" >"$WORK/helidon-mvn.log" 2>&1 ||
    log "cannot fetch Helidon 4.5.0 from Maven Central: $(tail -3 "$WORK/helidon-mvn.log")"
fi

CLASSES=$WORK/classes
mkdir -p "$CLASSES"
"$J25/bin/javac" -d "$CLASSES" -cp target/classes tests/vthreads/src/Vt{Common,Server,Load,Semantics,HttpClient}.java ||
  { echo "NOT RUN: cannot compile tests/vthreads/src"; echo "SUMMARY vthreads: $PASS passed, 1 failed"; exit 1; }
HCP=$(ls "$HELIDON"/*.jar 2>/dev/null | tr '\n' :)
HELIDON_OK=0
if [[ -f $HELIDON/helidon-webserver-4.5.0.jar ]] &&
   "$J25/bin/javac" -d "$CLASSES" -cp "target/classes:$HCP" tests/vthreads/src/Vt{Common,Helidon}.java; then
  HELIDON_OK=1
fi

openssl req -x509 -newkey rsa:2048 -nodes -keyout "$WORK/key.pem" -out "$WORK/cert.pem" -days 2 \
  -subj /CN=localhost -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" 2>/dev/null &&
openssl pkcs12 -export -inkey "$WORK/key.pem" -in "$WORK/cert.pem" -name server \
  -passout pass:changeit -out "$WORK/server.p12" || not_run "openssl cannot make a key"

# Two carriers: a pinned one cannot be replaced (the scheduler does not
# compensate for a thread blocked in native code).
VT_OPTS=(-Djdk.virtualThreadScheduler.parallelism=2 --enable-native-access=ALL-UNNAMED)

# start_server NAME CLASSPATH MAIN ARGS...: sets S_PID, S_CTL (fd to its stdin), S_OUT, S_PORT, S_JFR
start_server() {
  local name=$1 cp=$2 main=$3
  shift 3
  mkfifo "$WORK/$name.ctl"
  S_JFR=$WORK/$name.jfr
  S_OUT=$WORK/$name.out
  "$J25/bin/java" "${VT_OPTS[@]}" -cp "$cp" "$main" "$@" <"$WORK/$name.ctl" >"$S_OUT" 2>"$WORK/$name.err" &
  S_PID=$!
  PIDS+=("$S_PID")
  exec {S_CTL}>"$WORK/$name.ctl"
  wait_for_line "$S_OUT" '^LISTENING' "$S_PID"
  S_PORT=$(awk '/^LISTENING/{print $2; exit}' "$S_OUT")
  [[ -n $S_PORT ]]
}

# JFR records from here (after a first request, so classes the handshake needs are
# initialised: a virtual thread waiting for another thread's class initialisation is
# pinned, a one-time event of any JVM's start, SunJSSE's as well) to jfr_stop.
jfr_start() {
  timeout 60 "$J25/bin/jcmd" "$S_PID" JFR.start name=vt settings=default >/dev/null 2>&1 ||
    log "JFR.start failed on $S_PID"
}
jfr_stop() {
  timeout 60 "$J25/bin/jcmd" "$S_PID" JFR.stop name=vt filename="$S_JFR" >/dev/null 2>&1 ||
    log "JFR.stop failed on $S_PID"
}

# warm: one request, so the handshake's classes are initialised before the load
warm() {
  local body
  body=$(timeout 30 curl -sk "https://127.0.0.1:$S_PORT/" 2>&1)
  [[ $body == ok ]] || log "warm-up request: ${body:0:80}"
}

# stop_server: closes its stdin, waits for it to exit
stop_server() {
  exec {S_CTL}>&-
  wait_for_exit "$S_PID" 150
}

# carriers_in_tlsbridge: carrier threads whose mounted virtual thread is inside a tlsbridge native call
carriers_in_tlsbridge() {
  timeout 60 "$J25/bin/jcmd" "$S_PID" Thread.print 2>/dev/null | awk '
    /^"/ { if (mounted && inside) n++; mounted = 0; inside = 0 }
    /Mounted virtual thread/ { mounted = 1 }
    /org\.tlsbridge\.internal\.Native\./ { inside = 1 }
    END { if (mounted && inside) n++; print n + 0 }'
}

# pinned_events FILE -> "all tlsbridge": jdk.VirtualThreadPinned events, and those with a tlsbridge frame
pinned_events() {
  [[ -s $1 ]] || { echo "missing missing"; return; }
  "$J25/bin/jfr" print --stack-depth 64 --events jdk.VirtualThreadPinned "$1" | tee "$1.pinned.txt" | awk '
    /^jdk\.VirtualThreadPinned/ { if (inev && tb) t++; all++; inev = 1; tb = 0 }
    /org\.tlsbridge/ { tb = 1 }
    END { if (inev && tb) t++; print all + 0, t + 0 }'
}

# load NAME: VtLoad against S_PORT; pauses after the idle clients are in for the carrier check
run_load() {
  local name=$1
  mkfifo "$WORK/$name.load.ctl"
  timeout 120 "$J25/bin/java" -cp "$CLASSES" VtLoad "$S_PORT" 500 50 100 10 wait \
    <"$WORK/$name.load.ctl" >"$WORK/$name.load" 2>&1 &
  local lpid=$!
  exec {L_CTL}>"$WORK/$name.load.ctl"
  wait_for_line "$WORK/$name.load" '^IDLE' "$lpid"
  L_CARRIERS=$(carriers_in_tlsbridge)
  echo go >&"$L_CTL"
  exec {L_CTL}>&-
  wait "$lpid"
}

# ---- (a) virtual thread per connection over an SSLServerSocket ----
for cfg in "TLSBridge platform" "TLSBridge virtual" "SunJSSE platform"; do
  read -r impl acc <<<"$cfg"
  label="$impl, accept on a $acc thread"
  name="a-$impl-$acc"
  if ! start_server "$name" "$CLASSES:target/classes" VtServer "$impl" "$WORK/server.p12" changeit "$acc"; then
    bad "$label: server starts" "$(head -5 "$WORK/$name.err")"
    continue
  fi
  warm
  jfr_start
  run_load "$name"
  jfr_stop
  idle=$(grep '^IDLE' "$WORK/$name.load")
  active=$(grep '^ACTIVE' "$WORK/$name.load")
  echo "  $label: $idle; $active"
  [[ $idle == "IDLE tcp=500 tls=50/50" ]] && ok "$label: 50 idle clients finish their handshakes beside 500 silent ones" ||
    bad "$label: idle handshakes" "${idle:-no output: $(tail -2 "$WORK/$name.load")}"
  wall=$(sed -nE 's/.* wall_ms=([0-9]+).*/\1/p' <<<"$active")
  [[ $active == "ACTIVE ok=100/100 "* && -n $wall && $wall -le 10000 ]] &&
    ok "$label: 100 active clients served within 10 s while 550 wait" ||
    bad "$label: active clients" "${active:-no output}"
  [[ $L_CARRIERS == 0 ]] && ok "$label: no carrier thread inside a tlsbridge native call while clients idle" ||
    bad "$label: carriers pinned in tlsbridge natives" "$L_CARRIERS of 2"
  stop_server
  session=$(grep '^SESSION' "$S_OUT")
  if [[ $impl == TLSBridge ]]; then
    [[ $session == *"socket=org.tlsbridge.socket.TlsBridgeSocket session=org.tlsbridge."*"on virtual thread"* ]] &&
      ok "$label: served by tlsbridge's native socket on a virtual thread" || bad "$label: session" "$session"
  else
    [[ $session == *"socket=sun.security.ssl."* ]] && ok "$label: served by SunJSSE" || bad "$label: session" "$session"
  fi
  read -r all tb < <(pinned_events "$S_JFR")
  echo "  $label: jdk.VirtualThreadPinned events while loaded: $all, with a tlsbridge frame: $tb"
  [[ $tb == 0 ]] && ok "$label: JFR: no pinned virtual thread in tlsbridge" ||
    bad "$label: JFR pinned events" "$tb; the first: $(grep -m1 -B30 -A40 org.tlsbridge "$S_JFR.pinned.txt" | tr -s ' \n' ' ')"
done

# ---- (b) Helidon 4.5.0 ----
if ((HELIDON_OK == 0)); then
  bad "Helidon 4.5.0: NOT RUN (cannot fetch or compile against io.helidon.webserver:helidon-webserver:4.5.0)"
elif ! start_server helidon "$CLASSES:target/classes:$HCP" VtHelidon "$WORK/server.p12" changeit; then
  bad "Helidon: server starts" "$(tail -5 "$WORK/helidon.err")"
else
  grep -q 'provider=TLSBridge' "$S_OUT" && ok "Helidon: TLS from a TLSBridge SSLContext" || bad "Helidon: provider" "$(head -1 "$S_OUT")"
  for v in "--tlsv1.2 --tls-max 1.2" "--tlsv1.3"; do
    body=$(timeout 20 curl -sk $v "https://127.0.0.1:$S_PORT/" 2>&1)
    [[ $body == ok ]] && ok "Helidon: curl $v" || bad "Helidon: curl $v" "${body:0:80}"
  done
  jfr_start
  # 500 silent connections, then curl and HttpClient still served
  mkfifo "$WORK/h.idle.ctl"
  timeout 120 "$J25/bin/java" -cp "$CLASSES" VtLoad "$S_PORT" 500 0 0 10 wait <"$WORK/h.idle.ctl" >"$WORK/h.idle" 2>&1 &
  ipid=$!
  exec {I_CTL}>"$WORK/h.idle.ctl"
  wait_for_line "$WORK/h.idle" '^IDLE' "$ipid"
  grep -q '^IDLE tcp=500' "$WORK/h.idle" && ok "Helidon: 500 silent clients connected" || bad "Helidon: idle clients" "$(tail -2 "$WORK/h.idle")"
  n=$(carriers_in_tlsbridge)
  [[ $n == 0 ]] && ok "Helidon: no carrier thread inside a tlsbridge native call while clients idle" ||
    bad "Helidon: carriers pinned in tlsbridge natives" "$n of 2"
  for v in "--tlsv1.2 --tls-max 1.2" "--tlsv1.3"; do
    t0=$(date +%s%N)
    body=$(timeout 20 curl -sk $v "https://127.0.0.1:$S_PORT/" 2>&1)
    ms=$((($(date +%s%N) - t0) / 1000000))
    [[ $body == ok ]] && ok "Helidon: curl $v beside 500 silent clients ($ms ms)" || bad "Helidon: curl $v beside idle clients" "${body:0:80}"
  done
  for v in TLSv1.2 TLSv1.3; do
    r=$(timeout 60 "$J25/bin/java" -cp "$CLASSES" VtHttpClient "$S_PORT" "$v" 20 20 2>&1 | grep '^HTTPCLIENT')
    echo "  Helidon: $r"
    [[ $r == "HTTPCLIENT $v ok=20/20 "* ]] && ok "Helidon: Java HttpClient, $v, 20 requests at once beside 500 silent clients" ||
      bad "Helidon: HttpClient $v" "$r"
  done
  echo go >&"$I_CTL"
  exec {I_CTL}>&-
  wait "$ipid"
  jfr_stop
  stop_server
  for v in TLSv1.2 TLSv1.3; do
    s=$(grep "^SESSION $v" "$S_OUT")
    [[ $s == *"on=org.tlsbridge."*" session=org.tlsbridge."*"on virtual thread"* ]] &&
      ok "Helidon: $v served by tlsbridge on a virtual thread (${s#SESSION $v })" || bad "Helidon: $v session" "$s"
  done
  read -r all tb < <(pinned_events "$S_JFR")
  echo "  Helidon: jdk.VirtualThreadPinned events while loaded: $all, with a tlsbridge frame: $tb"
  [[ $tb == 0 ]] && ok "Helidon: JFR: no pinned virtual thread in tlsbridge" || bad "Helidon: JFR pinned events" "$tb"
fi

# ---- (c) timeouts and close from another thread ----
timeout 300 "$J25/bin/java" "${VT_OPTS[@]}" -XX:StartFlightRecording=filename="$WORK/sem.jfr",dumponexit=true,settings=default \
  -cp "$CLASSES:target/classes" VtSemantics "$WORK/server.p12" changeit >"$WORK/sem.out" 2>"$WORK/sem.err"
while read -r line; do
  case $line in
    PASS\ *) ok "semantics: ${line#PASS }" ;;
    FAIL\ *) bad "semantics: ${line#FAIL }" ;;
  esac
done <"$WORK/sem.out"
grep -q '^SEMANTICS' "$WORK/sem.out" || bad "semantics: the program did not finish" "$(tail -3 "$WORK/sem.err")"
read -r all tb < <(pinned_events "$WORK/sem.jfr")
[[ $tb == 0 ]] && ok "semantics: JFR: no pinned virtual thread in tlsbridge ($all pinned events in all)" ||
  bad "semantics: JFR pinned events" "$tb"

finish
