#!/usr/bin/env bash
# A fleet behind HAProxy (Debian package, TCP mode, round-robin, 127.0.0.1):
# three stock Tomcats serving TLS through tlsbridge, each reading its session
# ticket keys from its own key file (server.xml: <OpenSSLConfCmd
# name="tlsbridge.ticketKeys">, docs/fleet.md), and three with SunJSSE.
#   1. shared keys (the three files hold the same key): a client that resumes
#      resumes on every node (openssl s_client -sess_in with one saved
#      session, TLS 1.3 and 1.2; Python clients offering their latest ticket)
#   2. rotation under load: the files go old+new, then new+old, while
#      Python clients and wrk (Connection: close) run: no failed handshake,
#      no socket error, no resumption lost; a session saved before the
#      rotation still resumes on all three nodes afterwards
#   3. per-node keys (each file its own key) and SunJSSE: about a third
#   4. a world-readable key file: the connector does not start, Tomcat's log says why
# Resumed share and on-CPU time per connection (the three Tomcats, from
# /proc/PID/stat, after an unmeasured warm-up; one short run each, so only a
# rough figure) are printed per variant. Everything listens on 127.0.0.1
# ephemeral ports and is stopped at the end; about three minutes.
#
#   tests/haproxy/run.sh
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../../scripts/lib/common.sh"
cd "$TB_ROOT"

SUITE=haproxy
NOT_RUN_RC=0
source "$HERE/../lib/suite.sh"
source "$HERE/../lib/tomcat.sh"
tomcat_setup
need_pkgs haproxy || not_run "cannot install haproxy"
command -v haproxy >/dev/null || not_run "no haproxy after installing it"
if command -v systemctl >/dev/null && systemctl is-active --quiet haproxy 2>/dev/null; then
  systemctl stop haproxy && systemctl disable --quiet haproxy 2>/dev/null
fi
suite_jar
log "HAProxy $(haproxy -v | sed -n '1s/^HAProxy version \([^ ]*\).*/\1/p'), stock Tomcat $TOMCAT_VERSION, jar $JAR"

WORK=$(mktemp -d /tmp/tlsbridge-haproxy-suite.XXXXXX)
NODES=() # "BASE PIDFILE" of every Tomcat started
HAPROXY_PID=
LOADS=()
cleanup() {
  local n p
  for p in "${LOADS[@]}"; do kill "$p" 2>/dev/null; done
  [[ -n $HAPROXY_PID ]] && kill "$HAPROXY_PID" 2>/dev/null
  for n in "${NODES[@]}"; do
    BASE=${n% *} PIDFILE=${n#* } stop_tomcat
  done
  [[ -n ${KEEP_WORK:-} ]] || rm -rf "$WORK"
}
trap cleanup EXIT

PKI=$WORK/pki
mkdir -p "$PKI"
(
  cd "$PKI" || exit 1
  suite_ca
  openssl req -newkey rsa:2048 -nodes -keyout server.key -subj /CN=localhost -out server.csr
  printf 'basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n' >ext
  openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile ext -out server.pem
) >"$WORK/pki.log" 2>&1 || { cat "$WORK/pki.log"; not_run "openssl could not make the test PKI"; }
CERT='<Certificate certificateFile="conf/tls/server.pem" certificateKeyFile="conf/tls/server.key" type="RSA" />'

KEYS=$WORK/keys
mkdir -p "$KEYS" && chmod 700 "$KEYS"
for k in k1 k2 n1 n2 n3; do head -c 80 /dev/urandom >"$KEYS/$k"; done
# put_keys FILE KEY...: the keys, first one sealing, written through a rename as rotation tooling does
put_keys() {
  local f=$1; shift
  (umask 077 && cd "$KEYS" && cat "$@" >"$f.tmp" && mv "$f.tmp" "$f")
}

# node NAME IMPL: a Tomcat on a free port; IMPL tlsbridge (ticket keys from $KEYS/NAME.key) or sunjsse
node() {
  local name=$1 impl=$2 attrs="" conf="" port
  new_base "$WORK/$name"
  mkdir -p "$BASE/conf/tls" && cp "$PKI"/server.{pem,key} "$BASE/conf/tls/"
  if [[ $impl == tlsbridge ]]; then
    cp "$JAR" "$BASE/lib/"
    attrs='sslImplementationName="org.tlsbridge.tomcat.TlsBridgeImplementation"'
    conf="<OpenSSLConf><OpenSSLConfCmd name=\"tlsbridge.ticketKeys\" value=\"$KEYS/$name.key\" /></OpenSSLConf>"
  fi
  port=$(free_port)
  server_xml "$port" "$attrs" "$CERT $conf"
  EXTRA_OPTS="-Dtlsbridge.workdir=$BASE/work -Dtlsbridge.ticketKeys.checkMillis=500"
  PIDFILE=
  if ! start_tomcat; then
    logs | tail -40
    check "Tomcat $name ($impl) starts" false
    finish
  fi
  NODES+=("$BASE $PIDFILE")
  eval "PORT_$name=$port PID_$name=$(cat "$PIDFILE")"
}

for n in tb1 tb2 tb3; do put_keys "$n.key" k1; done
log "starting six Tomcats"
for n in tb1 tb2 tb3; do node "$n" tlsbridge; done
for n in sun1 sun2 sun3; do node "$n" sunjsse; done
check "six Tomcats up (tlsbridge on $PORT_tb1 $PORT_tb2 $PORT_tb3, SunJSSE on $PORT_sun1 $PORT_sun2 $PORT_sun3)" true

LB_TB=$(free_port)
LB_SUN=$(free_port)
cat >"$WORK/haproxy.cfg" <<CFG
global
  maxconn 4000
defaults
  mode tcp
  timeout connect 5s
  timeout client 30s
  timeout server 30s
frontend tlsbridge
  bind 127.0.0.1:$LB_TB
  default_backend tlsbridge
backend tlsbridge
  balance roundrobin
  server tb1 127.0.0.1:$PORT_tb1
  server tb2 127.0.0.1:$PORT_tb2
  server tb3 127.0.0.1:$PORT_tb3
frontend sunjsse
  bind 127.0.0.1:$LB_SUN
  default_backend sunjsse
backend sunjsse
  balance roundrobin
  server sun1 127.0.0.1:$PORT_sun1
  server sun2 127.0.0.1:$PORT_sun2
  server sun3 127.0.0.1:$PORT_sun3
CFG
haproxy -f "$WORK/haproxy.cfg" -db >"$WORK/haproxy.log" 2>&1 &
HAPROXY_PID=$!
for _ in $(seq 1 50); do
  curl -s -o /dev/null --max-time 2 --cacert "$PKI/ca.pem" "https://localhost:$LB_TB/" --resolve "localhost:$LB_TB:127.0.0.1" && break
  sleep 0.2
done
check "HAProxy (TCP, round-robin) up on 127.0.0.1:$LB_TB and :$LB_SUN" kill -0 "$HAPROXY_PID"

# saved_session PORT TLSOPT FILE: one full handshake through the balancer, its session saved
saved_session() {
  printf 'GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n' |
    timeout 20 openssl s_client -connect "127.0.0.1:$1" "$2" -servername localhost -CAfile "$PKI/ca.pem" \
      -verify_return_error -ign_eof -sess_out "$3" >"$3.log" 2>&1
  grep -q "HTTP/1.1 200" "$3.log"
}
# resumed_count PORT TLSOPT FILE N: of N connections offering the saved session, how many resumed
resumed_count() {
  local i n=0
  for i in $(seq 1 "$4"); do
    printf 'GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n' |
      timeout 20 openssl s_client -connect "127.0.0.1:$1" "$2" -servername localhost -CAfile "$PKI/ca.pem" \
        -verify_return_error -ign_eof -sess_in "$3" >"$3.$i.log" 2>&1
    grep -q "^Reused, " "$3.$i.log" && grep -q "HTTP/1.1 200" "$3.$i.log" && n=$((n + 1))
  done
  echo "$n"
}
cpu_ticks() { # the on-CPU clock ticks of the Tomcats named, all threads
  local n t=0 pid
  for n in "$@"; do
    pid=$(eval echo "\$PID_$n")
    t=$((t + $(awk '{ print $14 + $15 }' "/proc/$pid/stat")))
  done
  echo "$t"
}
TICK_US=$((1000000 / $(getconf CLK_TCK)))

# sclient VARIANT PORT: s_client with one saved session, 12 connections, TLS 1.3 and 1.2; sets SC_13 SC_12
sclient() {
  local v=$1 port=$2
  saved_session "$port" -tls1_3 "$WORK/$v-13.sess" || { echo "  no first session ($v)"; SC_13=0; }
  SC_13=$(resumed_count "$port" -tls1_3 "$WORK/$v-13.sess" 12)
  saved_session "$port" -tls1_2 "$WORK/$v-12.sess" || { echo "  no first session ($v)"; SC_12=0; }
  SC_12=$(resumed_count "$port" -tls1_2 "$WORK/$v-12.sess" 12)
  echo "  figures: $v s_client -sess_in (one saved session): TLS 1.3 $SC_13/12 resumed, TLS 1.2 $SC_12/12 resumed"
}
# pyload VARIANT PORT VERSION SECONDS NODES...: Python clients offering their latest ticket; sets PY (JSON)
pyload() {
  local v=$1 port=$2 ver=$3 secs=$4 t0 t1 conns; shift 4
  t0=$(cpu_ticks "$@")
  PY=$(timeout $((secs + 60)) python3 "$HERE/resume_client.py" 127.0.0.1 "$port" "$secs" 4 "$ver" "$PKI/ca.pem")
  t1=$(cpu_ticks "$@")
  conns=$(pyfield connections)
  echo "  figures: $v python TLS $ver, 4 clients ${secs}s: $PY; cluster CPU $(( (t1 - t0) * TICK_US / (conns > 0 ? conns : 1) )) us/connection"
}
pyfield() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$PY" "$1"; }
share_at_least() { (($1 * 100 >= $3 * $2)); } # resumed total percent
share_below() { (($1 * 100 < $3 * $2)); }

# JIT warm-up first (unmeasured, both clusters at once): a cold JVM's CPU per connection says little
log "warm-up: 8 s of Python clients on both clusters"
timeout 70 python3 "$HERE/resume_client.py" 127.0.0.1 "$LB_TB" 8 2 1.3 "$PKI/ca.pem" >/dev/null &
LOADS+=($!)
timeout 70 python3 "$HERE/resume_client.py" 127.0.0.1 "$LB_SUN" 8 2 1.3 "$PKI/ca.pem" >/dev/null
wait "${LOADS[-1]}" # not a bare wait: HAProxy runs in the background too

# ======================= 1. shared keys =======================
sclient shared "$LB_TB"
check "shared keys: s_client TLS 1.3 resumes on every node ($SC_13/12)" test "$SC_13" -eq 12
check "shared keys: s_client TLS 1.2 resumes on every node ($SC_12/12)" test "$SC_12" -eq 12
for ver in 1.3 1.2; do
  pyload shared "$LB_TB" "$ver" 6 tb1 tb2 tb3
  c=$(pyfield connections) r=$(pyfield resumed) f=$(pyfield failures)
  check "shared keys: Python TLS $ver clients resume >= 99% ($r/$c), no failures ($f)" \
    bash -c '(($1 > 50 && $2 * 100 >= 99 * $1 && $3 == 0))' _ "$c" "$r" "$f"
  check "shared keys: negotiated TLS $ver ($(pyfield protocols))" test "$(pyfield protocols)" = "['TLSv$ver']"
done

# ======================= 2. rotation under load =======================
saved_session "$LB_TB" -tls1_3 "$WORK/before-13.sess"
saved_session "$LB_TB" -tls1_2 "$WORK/before-12.sess"
log "rotation under load: 18 s of Python clients and wrk (Connection: close), from $(date +%T)"
timeout 80 python3 "$HERE/resume_client.py" 127.0.0.1 "$LB_TB" 18 4 1.3 "$PKI/ca.pem" >"$WORK/rot-py.json" &
LOADS+=($!)
PYLOAD=$!
timeout 80 wrk -c 8 -t 2 -d 18s --timeout 10s -H "Connection: close" "https://127.0.0.1:$LB_TB/" >"$WORK/rot-wrk.txt" 2>&1 &
LOADS+=($!)
WRKLOAD=$!
sleep 5
# phase 1: the new key everywhere, decrypting only; phase 2, a check period later: it seals
for n in tb1 tb2 tb3; do put_keys "$n.key" k1 k2; done
sleep 5
for n in tb1 tb2 tb3; do put_keys "$n.key" k2 k1; done
wait "$PYLOAD" "$WRKLOAD"
log "rotation load over at $(date +%T)"
PY=$(cat "$WORK/rot-py.json")
echo "  figures: rotation python TLS 1.3: $PY"
sed 's/^/  wrk: /' "$WORK/rot-wrk.txt"
c=$(pyfield connections) r=$(pyfield resumed) f=$(pyfield failures)
check "rotation under load: no failed connection ($f of $c)" test "$f" -eq 0
check "rotation under load: resumption kept (>= 99%: $r/$c)" bash -c '(($1 > 50 && $2 * 100 >= 99 * $1))' _ "$c" "$r"
wrkreqs=$(sed -nE 's/^ *([0-9]+) requests in.*/\1/p' "$WORK/rot-wrk.txt")
check "rotation under load: wrk Connection: close, ${wrkreqs:-0} requests, 0 socket errors, 0 non-2xx" \
  bash -c '(($1 > 50)) && ! grep -qE "Socket errors|Non-2xx" "$2"' _ "${wrkreqs:-0}" "$WORK/rot-wrk.txt"
old13=$(resumed_count "$LB_TB" -tls1_3 "$WORK/before-13.sess" 3)
old12=$(resumed_count "$LB_TB" -tls1_2 "$WORK/before-12.sess" 3)
check "a session saved before the rotation resumes on all three nodes (TLS 1.3 $old13/3, TLS 1.2 $old12/3)" \
  test "$old13$old12" = 33
rotated=0
for n in tb1 tb2 tb3; do
  BASE=$WORK/$n
  (($(logs | grep -c "new session ticket keys from $KEYS/$n.key") >= 2)) && rotated=$((rotated + 1))
done
check "each node logged both key changes ($rotated/3)" test "$rotated" -eq 3
leak=0
for n in tb1 tb2 tb3; do
  BASE=$WORK/$n
  for k in k1 k2; do
    logs | grep -qF "$(head -c 16 "$KEYS/$k" | od -An -tx1 | tr -d ' \n')" && leak=1
  done
done
check "no key name in the Tomcat logs" test "$leak" -eq 0

# ======================= 3. per-node keys, SunJSSE =======================
put_keys tb1.key n1
put_keys tb2.key n2
put_keys tb3.key n3
sleep 2
sclient per-node "$LB_TB"
check "per-node keys: s_client resumes on one node in three (TLS 1.3 $SC_13/12, TLS 1.2 $SC_12/12)" \
  test "$SC_13$SC_12" = 44
pyload per-node "$LB_TB" 1.3 6 tb1 tb2 tb3
c=$(pyfield connections) r=$(pyfield resumed)
check "per-node keys: Python TLS 1.3 clients resume far less (${r}/${c} < 60%)" bash -c '(($1 > 50 && $2 * 100 < 60 * $1))' _ "$c" "$r"

sclient sunjsse "$LB_SUN"
check "SunJSSE: s_client resumes at most on one node in three (TLS 1.3 $SC_13/12, TLS 1.2 $SC_12/12)" \
  bash -c '(($1 <= 4 && $2 <= 4))' _ "$SC_13" "$SC_12"
pyload sunjsse "$LB_SUN" 1.3 6 sun1 sun2 sun3
c=$(pyfield connections) r=$(pyfield resumed)
check "SunJSSE: Python TLS 1.3 clients resume far less (${r}/${c} < 60%)" bash -c '(($1 > 20 && $2 * 100 < 60 * $1))' _ "$c" "$r"

# wrk and the Python clients drop the connections they have in flight when their time is up:
# handshakes the client reset, or closed before it ended (the engine then says the inbound side
# closed without close_notify, or Tomcat read end-of-stream before the engine saw a byte), or
# whose reply met a closed socket
JUDGE_IGNORE='Handshake failed[^\n]*\n[ \t]*(java\.net\.SocketException: (Connection reset|Broken pipe)|javax\.net\.ssl\.SSLException: closing inbound before receiving peer.s close_notify|java\.io\.IOException: EOF during handshake\.)'
for n in tb1 tb2 tb3; do
  BASE=$WORK/$n
  judge_log "$n: no TLS errors in Tomcat's log"
done

# ======================= 4. a bad key file at startup =======================
put_keys bad.key k1
chmod 644 "$KEYS/bad.key"
node bad tlsbridge
reason=$(logs | grep -m1 -o "session ticket key file [^ ]* is readable by every user[^;]*")
check "a world-readable key file: Tomcat's log says why (${reason:-nothing})" test -n "$reason"
check "a world-readable key file: that connector serves nothing" \
  bash -c '! curl -s -o /dev/null --max-time 5 -k "https://127.0.0.1:$1/"' _ "$PORT_bad"
finish
