#!/usr/bin/env bash
# Stock Debian Tomcat (package tomcat10) serving HTTPS through tlsbridge,
# configured only through server.xml and the tlsbridge jar in lib/:
#   1. sslImplementationName="org.tlsbridge.tomcat.TlsBridgeImplementation",
#      PEM certificate with an encrypted key: curl, openssl s_client (TLS 1.2
#      and 1.3), the start log line naming tlsbridge and OpenSSL, then wrk
#      with 200 keep-alive connections for 20 s: 0 socket errors, 0 non-2xx,
#      no engine errors in Tomcat's log. OpenSSL 3.5's s_client negotiates
#      X25519MLKEM768 by default and the access log (TlsBridgeSupport) shows
#      it server-side; then tlsbridge.openssl=system in catalina.properties
#      puts Debian 12's OpenSSL 3.0 behind the connector: X25519.
#      Then certificate reload through JMX
#      (JmxReload.java attaches to Tomcat's JVM; the same operation the
#      Manager's /manager/text/sslReload runs): new PEM files, one reload,
#      s_client sees the new certificate, a keep-alive connection opened
#      before still serves; 100 more reloads, and tlsbridge's live native
#      object counts (MBean org.tlsbridge:type=NativeObjects) are back to
#      where they were. Reload latency and RSS are printed, not judged.
#      Then the same through the Manager webapp (package tomcat10-admin,
#      deployed in the suite's CATALINA_BASE, a manager-script user with a
#      password made per run): a wrong password gets 401 and reloads nothing,
#      /manager/text/sslReload answers OK and s_client sees the next
#      certificate, a keep-alive connection opened before still serves, and
#      a mismatched key/certificate fails (HTTP 500 with tlsbridge's reason:
#      the Manager does not catch it) and keeps the old one.
#   2. drop-in: Tomcat's default JSSE implementation with TLSBridge first in
#      the JCA provider list (jar on the system class path, java.security
#      override), as docs/tomcat.md describes.
# Every server listens on 127.0.0.1 only; both instances are stopped at the
# end and the system tomcat10 service is never left running.
#
#   tests/tomcat/run.sh [native-build-dir]   (the argument is not needed: the jar carries the library)
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../../scripts/lib/common.sh"
source "$HERE/../../scripts/lib/openssl.sh"
cd "$TB_ROOT"

SUITE=tomcat
NOT_RUN_RC=0
source "$HERE/../lib/suite.sh"

source "$HERE/../lib/tomcat.sh"
tomcat_setup

suite_jar
log "stock Tomcat $TOMCAT_VERSION, jar $JAR"

WORK=$(mktemp -d /tmp/tlsbridge-tomcat-suite.XXXXXX)
cleanup() { stop_tomcat; rm -rf "$WORK"; }
trap cleanup EXIT

# --- a throw-away PKI: CA, server certificate with an encrypted PEM key ---
PKI=$WORK/pki
mkdir -p "$PKI"
(
  cd "$PKI" || exit 1
  suite_ca
  openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -aes-256-cbc -pass pass:suite-secret -out server.key
  openssl req -new -key server.key -passin pass:suite-secret -subj /CN=localhost -out server.csr
  printf 'basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n' >ext
  openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile ext -out server.pem
  openssl pkcs12 -export -inkey server.key -passin pass:suite-secret -in server.pem -certfile ca.pem -name tomcat \
    -passout pass:suite-secret -out server.p12
  # the renewed certificate a reload picks up: a new key too, same password
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -aes-256-cbc -pass pass:suite-secret -out renewed.key
  openssl req -new -key renewed.key -passin pass:suite-secret -subj /CN=localhost -out renewed.csr
  openssl x509 -req -in renewed.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile ext -out renewed.pem
  # and the one after it, for the reload through the Manager
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -aes-256-cbc -pass pass:suite-secret -out again.key
  openssl req -new -key again.key -passin pass:suite-secret -subj /CN=localhost -out again.csr
  openssl x509 -req -in again.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile ext -out again.pem
) >"$WORK/pki.log" 2>&1 || { cat "$WORK/pki.log"; not_run "openssl could not make the test PKI"; }

# ---- certificate reload through JMX, on the running Tomcat of section 1 ----
JMX() { "$JAVA_HOME/bin/java" "$HERE/JmxReload.java" "$TOMCAT_PID" "$@" 2>&1; }
fingerprint() { openssl x509 -noout -fingerprint -sha256 "$@" 2>/dev/null; }
presented() { openssl s_client -connect "127.0.0.1:$PORT" -servername localhost </dev/null 2>/dev/null | fingerprint; }
install_tls() { # FILE IN-CONF: replaced atomically, as renewal tooling does
  cp "$1" "$BASE/conf/tls/$2.new" && mv "$BASE/conf/tls/$2.new" "$BASE/conf/tls/$2"
}
keepalive_start() { # a keep-alive connection that has served one request (check named $1)
  local first
  coproc KA { timeout 120 python3 "$HERE/../lib/reload_client.py" "$PORT" "$PKI/ca.pem" / 2>&1; }
  read -r -t 30 first <&"${KA[0]}"
  check "$1" grep -q "status=200" <<<"$first"
}
keepalive_again() { # ... and serves a second request on the same connection now (check named $1)
  local second
  echo go >&"${KA[1]}"
  read -r -t 30 second <&"${KA[0]}"
  check "$1" grep -q "status=200.*same-connection=True" <<<"$second"
  wait "$KA_PID" 2>/dev/null
}
# the record Tomcat logs for a reload with a key that does not match its certificate
MISMATCH_LOG='reloadSslHostConfigs.*server\.key\] for \[[^]]*server\.pem\] cannot serve its certificate'
rss_kib() { awk '/^VmRSS/{print $2}' "/proc/$TOMCAT_PID/status"; }
reload_suite() {
  local base out after rss0 rss1 new
  presented >/dev/null
  base=$(JMX counts)
  echo "  live native objects before: $base"
  check "reload: tlsbridge's NativeObjects MBean answers over JMX" grep -q '^contexts=[0-9]' <<<"$base"
  keepalive_start "reload: a keep-alive connection opened before the reload"
  install_tls "$PKI/renewed.key" server.key
  install_tls "$PKI/renewed.pem" server.pem
  out=$(JMX reload "$PORT")
  echo "  one reload: $out"
  new=$(presented)
  check "reload via JMX: openssl s_client gets the renewed certificate (${new#*=})" \
    test -n "$new" -a "$new" = "$(fingerprint -in "$PKI/renewed.pem")"
  keepalive_again "reload: the keep-alive connection opened before still serves requests"
  # a renewal caught half-way: the old certificate with the new key. The reload must fail, naming
  # the files, and the renewed certificate keep serving.
  install_tls "$PKI/server.pem" server.pem
  out=$(JMX reload "$PORT")
  echo "  mismatched reload: $(grep -o 'cannot serve its certificate.*' <<<"$out" | head -1 | cut -c1-160)"
  check "reload with a key that does not match its certificate fails, naming the files" \
    grep -q "server.key\] for \[.*server.pem\] cannot serve its certificate" <<<"$out"
  check "... and the renewed certificate keeps serving" test "$(presented)" = "$(fingerprint -in "$PKI/renewed.pem")"
  EXPECTED_LOG=$MISMATCH_LOG
  check "... and Tomcat logged that reload's failure with tlsbridge's reason" test -n "$(log_records expected)"
  install_tls "$PKI/renewed.pem" server.pem
  rss0=$(rss_kib)
  out=$(JMX reload "$PORT" 100)
  echo "  100 reloads: $out"
  presented >/dev/null
  after=$(JMX counts)
  rss1=$(rss_kib)
  echo "  live native objects after 100 reloads: $after; RSS $rss0 -> $rss1 KiB"
  check "reload: 100 more reloads, live contexts/connections/keys back to baseline (${base% heap=*})" \
    test "${after% heap=*}" = "${base% heap=*}"
  judge_log "reload: no TLS errors in Tomcat's log but that failed reload"
  EXPECTED_LOG=
}

# ---- certificate reload through the Manager's text interface, after reload_suite ----
MGR_USER=reloader
MGR_PASS=$(openssl rand -hex 16)
sslreload() { # CREDENTIALS [QUERY]: the Manager's answer, then "HTTP <status>"
  curl -sS --max-time 30 --cacert "$PKI/ca.pem" -u "$1" -w '\nHTTP %{http_code}\n' \
    "https://127.0.0.1:$PORT/manager/text/sslReload${2:-}" 2>&1
}
manager_suite() {
  local before out new again reason
  before=$(presented)
  again=$(fingerprint -in "$PKI/again.pem")
  keepalive_start "Manager: a keep-alive connection opened before the reload"
  install_tls "$PKI/again.key" server.key
  install_tls "$PKI/again.pem" server.pem
  out=$(sslreload "$MGR_USER:not-$MGR_PASS")
  check "Manager: a wrong password gets 401 ($(tail -1 <<<"$out"))" grep -qx "HTTP 401" <<<"$out"
  check "... and reloads nothing: the previous certificate still serves" test -n "$before" -a "$(presented)" = "$before"
  out=$(sslreload "$MGR_USER:$MGR_PASS" "?tlsHostName=_default_")
  echo "  Manager: $(head -1 <<<"$out")"
  check "Manager: /manager/text/sslReload?tlsHostName=_default_ answers OK" \
    grep -q "^OK - Reloaded TLS configuration for \[_default_\]" <<<"$out"
  new=$(presented)
  check "reload via the Manager: openssl s_client gets the renewed certificate (${new#*=})" \
    test -n "$new" -a "$new" = "$again" -a "$new" != "$before"
  keepalive_again "Manager: the keep-alive connection opened before still serves requests"
  # a half-done renewal again, through the Manager without tlsHostName (every TLS host). The Manager
  # does not catch a failed reload (ManagerServlet.sslReload): HTTP 500 with Tomcat's error page,
  # which carries tlsbridge's reason.
  install_tls "$PKI/renewed.pem" server.pem
  out=$(sslreload "$MGR_USER:$MGR_PASS")
  reason=$(sed 's|&#47;|/|g' <<<"$out" | grep -o 'the private key of \[[^]]*\] for \[[^]]*\] cannot serve its certificate' | head -1)
  echo "  Manager, mismatched files: $(tail -1 <<<"$out"), $reason"
  check "Manager: reloading a key that does not match its certificate fails (HTTP 500, tlsbridge's reason)" \
    test "$(tail -1 <<<"$out")" = "HTTP 500" -a \
    "$reason" = "the private key of [conf/tls/server.key] for [conf/tls/server.pem] cannot serve its certificate"
  check "... and the certificate before keeps serving" test "$(presented)" = "$again"
  EXPECTED_LOG=$MISMATCH_LOG
  check "... and Tomcat logged the Manager's failure with tlsbridge's reason" \
    grep -q 'Servlet.service() for servlet \[Manager\]' <<<"$(log_records expected)"
  install_tls "$PKI/again.pem" server.pem
  judge_log "Manager: no TLS errors in Tomcat's log but the failed reloads"
  EXPECTED_LOG=
}

CERT='<Certificate certificateFile="conf/tls/server.pem" certificateKeyFile="conf/tls/server.key" certificateKeyPassword="suite-secret" type="RSA" />'

# ======================= 1. sslImplementationName =======================
new_base "$WORK/base-impl"
cp "$JAR" "$BASE/lib/"
mkdir -p "$BASE/conf/tls" && cp "$PKI"/server.{pem,key} "$BASE/conf/tls/"
deploy_manager "$MGR_USER" "$MGR_PASS" || check "the Manager webapp is installed ($MANAGER_DOCBASE from tomcat10-admin)" false
PORT=$(free_port)
server_xml "$PORT" 'sslImplementationName="org.tlsbridge.tomcat.TlsBridgeImplementation"' "$CERT" \
  '<UpgradeProtocol className="org.apache.coyote.http2.Http2Protocol" />'
EXTRA_OPTS="-Dtlsbridge.workdir=$BASE/work"
if ! start_tomcat; then
  logs | tail -60
  check "stock Tomcat starts with the tlsbridge connector" false
  finish
fi
check "stock Tomcat $TOMCAT_VERSION starts with the tlsbridge connector on 127.0.0.1:$PORT" true

body=$(curl -sS --max-time 20 --cacert "$PKI/ca.pem" --resolve "localhost:$PORT:127.0.0.1" "https://localhost:$PORT/" 2>&1)
check "curl gets the stock ROOT page over HTTPS (server verified)" grep -q "It works" <<<"$body"
h2=$(curl -sS --max-time 20 --http2 -o /dev/null -w '%{http_version}' --cacert "$PKI/ca.pem" \
  --resolve "localhost:$PORT:127.0.0.1" "https://localhost:$PORT/" 2>&1)
check "curl --http2: HTTP/2 by ALPN (got HTTP version '$h2')" test "$h2" = 2

ok_tls() { # version openssl-option expected-cipher
  local out
  out=$(printf 'GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n' |
    timeout 20 openssl s_client -connect "127.0.0.1:$PORT" -servername localhost -CAfile "$PKI/ca.pem" \
      -verify_return_error -ign_eof "$2" "$3" "$4" 2>&1)
  grep -q "New, $1, Cipher is $5" <<<"$out" && grep -q "HTTP/1.1 200" <<<"$out"
}
check "openssl s_client TLS 1.3 TLS_AES_256_GCM_SHA384" ok_tls TLSv1.3 -tls1_3 -ciphersuites TLS_AES_256_GCM_SHA384 TLS_AES_256_GCM_SHA384
check "openssl s_client TLS 1.2 ECDHE-RSA-AES128-GCM-SHA256" ok_tls TLSv1.2 -tls1_2 -cipher ECDHE-RSA-AES128-GCM-SHA256 ECDHE-RSA-AES128-GCM-SHA256

startline=$(logs | grep -m1 "TLS for this connector is served by org.tlsbridge.tomcat.TlsBridgeImplementation")
echo "  log: ${startline#*INFO }"
check "Tomcat's log names tlsbridge, its version and OpenSSL's" grep -qE "tlsbridge [0-9].*OpenSSL 3\." <<<"$startline"

# --- key-exchange groups: OpenSSL 3.5's s_client gets X25519MLKEM768 from the bundled OpenSSL by
# default, and Tomcat reports the group server-side (TlsBridgeSupport, in the access log) ---
O35=$(tb_openssl_dir 3.5)/bin/openssl
group_check() { # NAME EXPECTED-GROUP EXPECTED-S_CLIENT-LINE PATH
  local out
  if [[ ! -x $O35 ]]; then
    check "$1: OpenSSL 3.5's openssl is MISSING at $O35 (scripts/openssl builds it)" false
    return
  fi
  out=$(printf 'GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n' "$4" |
    timeout 20 "$O35" s_client -connect "127.0.0.1:$PORT" -servername localhost -CAfile "$PKI/ca.pem" \
      -verify_return_error -ign_eof 2>&1)
  check "$1: s_client 3.5 shows '$3'" grep -q "$3" <<<"$out"
  sleep 0.5 # the access log line is written after the response
  check "$1: Tomcat reports $2 server-side ($(grep -h "GET $4 " "$BASE"/logs/access*.log | cut -d'|' -f2))" \
    grep -q "GET $4 HTTP/1.1|TLSv1.3 TLS_[A-Z0-9_]* $2\$" "$BASE"/logs/access*.log
}
group_check "default groups, bundled OpenSSL 3.5" X25519MLKEM768 "Negotiated TLS1.3 group: X25519MLKEM768" /pq

log "wrk: 200 keep-alive connections, 2 threads, 20 s"
wrkout=$(timeout 60 wrk -c 200 -t 2 -d 20s --timeout 10s "https://127.0.0.1:$PORT/" 2>&1)
echo "$wrkout" | sed 's/^/  wrk: /'
reqs=$(sed -nE 's/^ *([0-9]+) requests in.*/\1/p' <<<"$wrkout")
check "wrk completed requests (${reqs:-0})" test "${reqs:-0}" -gt 1000
check "wrk: 0 socket errors" bash -c '! grep -q "Socket errors" <<<"$1"' _ "$wrkout"
check "wrk: 0 non-2xx/3xx responses" bash -c '! grep -q "Non-2xx" <<<"$1"' _ "$wrkout"
judge_log "no TLS errors, exceptions or failed handshakes in Tomcat's log after the load"
TOMCAT_PID=$(cat "$PIDFILE")
reload_suite
manager_suite
stop_tomcat
check "Tomcat stopped" bash -c '! kill -0 "$1" 2>/dev/null' _ "$TOMCAT_PID"

# ======================= 1b. the system OpenSSL, chosen in catalina.properties =======================
# Any property in conf/catalina.properties becomes a system property before the connector starts:
# the stock-Tomcat route to -Dtlsbridge.openssl=system. Debian 12's OpenSSL 3.0 has no ML-KEM, so
# the same s_client gets X25519.
echo "tlsbridge.openssl=system" >>"$BASE/conf/catalina.properties"
rm -f "$BASE"/logs/*
if start_tomcat; then
  check "catalina.properties tlsbridge.openssl=system: Tomcat starts on the system OpenSSL" \
    grep -qE "TLS for this connector is served by .*OpenSSL 3\.0\." <<<"$(logs)"
  group_check "system OpenSSL 3.0" x25519 "Peer Temp Key: X25519" /classic
else
  logs | tail -40
  check "catalina.properties tlsbridge.openssl=system: Tomcat starts on the system OpenSSL" false
fi
stop_tomcat

# ======================= 2. drop-in: TLSBridge first, JSSEImplementation =======================
new_base "$WORK/base-dropin"
mkdir -p "$BASE/tlsbridge" "$BASE/conf/tls" && cp "$JAR" "$BASE/tlsbridge/" && cp "$PKI/server.p12" "$BASE/conf/tls/"
# The JDK's provider list with TLSBridge in front, everything else shifted by one.
{
  echo "security.provider.1=TLSBridge"
  grep -E '^security\.provider\.[0-9]+=' "$JAVA_HOME/conf/security/java.security" |
    awk -F'[.=]' '{ n = $3 + 1; sub(/^security\.provider\.[0-9]+=/, ""); print "security.provider." n "=" $0 }'
} >"$BASE/conf/tlsbridge.java.security"
cat >"$BASE/bin/setenv.sh" <<SH
# JCA loads providers through the system class loader: the jar goes on CLASSPATH, not in lib/.
CLASSPATH="$BASE/tlsbridge/$(basename "$JAR")"
JAVA_OPTS="\$JAVA_OPTS -Djava.security.properties=$BASE/conf/tlsbridge.java.security"
SH
PORT=$(free_port)
# A key store, not the encrypted PEM key: in JSSE mode Tomcat parses PEM itself and warns about
# AES-CBC key encryption (Tomcat 10.1.60), which would say nothing about tlsbridge.
server_xml "$PORT" "" '<Certificate certificateKeystoreFile="conf/tls/server.p12" certificateKeystorePassword="suite-secret" certificateKeystoreType="PKCS12" type="RSA" />'
mkdir -p "$BASE/native"
EXTRA_OPTS="-Dtlsbridge.workdir=$BASE/native"
if start_tomcat; then
  check "drop-in: stock Tomcat starts with its default JSSE implementation" true
  body=$(curl -sS --max-time 20 --cacert "$PKI/ca.pem" --resolve "localhost:$PORT:127.0.0.1" "https://localhost:$PORT/" 2>&1)
  check "drop-in: curl gets the ROOT page over HTTPS" grep -q "It works" <<<"$body"
  # The provider extracts its native library on the first SSLContext: proof that JCA handed Tomcat tlsbridge.
  check "drop-in: the TLSBridge provider served Tomcat's SSLContext (native library loaded)" \
    bash -c 'ls "$1"/tlsbridge-*/libtlsbridge*.so >/dev/null 2>&1' _ "$BASE/native"
  tickets=$(printf 'GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n' |
    timeout 20 openssl s_client -connect "127.0.0.1:$PORT" -tls1_3 -CAfile "$PKI/ca.pem" -ign_eof 2>&1 |
    grep -c "Post-Handshake New Session Ticket")
  # OpenSSL servers send two TLS 1.3 tickets per handshake, SunJSSE one.
  check "drop-in: TLS 1.3 handshake shows OpenSSL's two session tickets ($tickets)" test "$tickets" -eq 2
  judge_log "drop-in: no TLS errors in Tomcat's log"
else
  logs | tail -40
  check "drop-in: stock Tomcat starts with its default JSSE implementation" false
fi
stop_tomcat
finish
