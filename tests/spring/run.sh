#!/usr/bin/env bash
# Spring Boot applications whose embedded server speaks TLS through tlsbridge
# with no code and no configuration beyond the tlsbridge jar on the class
# path (auto-configuration org.tlsbridge.spring), for Spring Boot 3.5
# (Tomcat 10.1, Jetty 12.0) and 4.0 (Tomcat 11, Jetty 12.1), built from Maven Central:
#   1. server.ssl.* with a PEM certificate and encrypted PEM key, HTTP/2 on:
#      curl HTTP/1.1 and h2, TLS 1.2 and 1.3, Java's HttpClient on tlsbridge
#      (h2 and 1.1); every answer says the server-side SSLSession was tlsbridge's.
#   2. PKCS12 key store + trust store, client-auth need, TLS 1.3 only: curl
#      and HttpClient with a client certificate; without one the handshake fails.
#   3. wrong key password: the start fails with Spring Boot's error (PEM key) or
#      JSSE's own (key store); a wrong key-store password: Spring Boot's error
#      naming the file (Tomcat and Netty).
#   4. tlsbridge.enabled=false, and a library that cannot load (one WARN, JSSE
#      serves), and the same with tlsbridge.required=true (the start fails).
#   5. embedded Jetty: key store, trust store, client-auth need (HTTP/1.1, TLS 1.2
#      and 1.3, curl and HttpClient); h2 through tlsbridge once the jar has a
#      Jetty ALPN processor, until then one WARN and JSSE serving h2.
#   6. server-name SSL bundles (the certificate chosen by SNI; Tomcat and Netty:
#      Spring Boot refuses them with Jetty) and client-auth want (a client with
#      and one without a certificate are both served; the server sees it only when sent).
#   7. WebFlux on Reactor Netty: tlsbridge under Netty's SslContext (JDK mode):
#      as 1 (h2 and HTTP/1.1, TLS 1.2 and 1.3, curl and HttpClient), as 2, as 6,
#      and tlsbridge.enabled=false (JSSE serves h2).
# Every server listens on 127.0.0.1 with a free port and is stopped at the end.
#
#   tests/spring/run.sh
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../../scripts/lib/common.sh"
cd "$TB_ROOT"

SUITE=spring
NOT_RUN_RC=0
source "$HERE/../lib/suite.sh"

need_pkgs curl openssl python3 maven || not_run "cannot install curl/openssl/maven"
export JAVA_HOME=${JAVA_HOME:-$(jdk17_home)}
JAVA=$JAVA_HOME/bin/java
BOOT_VERSIONS=${TB_SPRING_BOOT_VERSIONS:-"3.5.16 4.0.9"}

suite_jar

WORK=$(mktemp -d /tmp/tlsbridge-spring-suite.XXXXXX)
APP_PID=
stop_app() {
  [[ -n $APP_PID ]] || return 0
  kill "$APP_PID" 2>/dev/null
  local i; for i in $(seq 1 40); do kill -0 "$APP_PID" 2>/dev/null || break; sleep 0.25; done
  kill -9 "$APP_PID" 2>/dev/null
  wait "$APP_PID" 2>/dev/null
  APP_PID=
}
cleanup() { stop_app; rm -rf "$WORK"; }
trap cleanup EXIT

# --- a throw-away PKI: CA, server certificate (PEM with encrypted key, and PKCS12), client certificate ---
PKI=$WORK/pki
mkdir -p "$PKI"
(
  cd "$PKI" || exit 1
  suite_ca
  openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -aes-256-cbc -pass pass:key-secret -out server.key
  openssl req -new -key server.key -passin pass:key-secret -subj /CN=localhost -out server.csr
  printf 'basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n' >ext
  openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile ext -out server.pem
  openssl pkcs12 -export -in server.pem -inkey server.key -passin pass:key-secret -name server \
    -passout pass:store-secret -out server.p12
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -aes-256-cbc -pass pass:key-secret -out server2.key
  openssl req -new -key server2.key -passin pass:key-secret -subj /CN=localhost -out server2.csr
  openssl x509 -req -in server2.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile ext -out server2.pem
  openssl req -newkey rsa:2048 -nodes -keyout client.key -subj "/CN=suite client" -out client.csr
  printf 'basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n' >cext
  openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile cext -out client.pem
  openssl pkcs12 -export -in client.pem -inkey client.key -name client -passout pass:client-secret -out client.p12
  keytool -importcert -noprompt -alias ca -file ca.pem -keystore trust.p12 -storetype PKCS12 -storepass trust-secret
) >"$WORK/pki.log" 2>&1 || { cat "$WORK/pki.log"; not_run "openssl/keytool could not make the test PKI"; }

# start_app LOG ARGS...: runs the app in the background; 0 once it listens, 1 if it exited or timed out
start_app() {
  local logf=$1; shift
  PORT=$(free_port)
  local main=${APP_MAIN:-tbtest.App}
  : >"$logf" # exists before the first grep below, whatever the background start's timing
  "$JAVA" -Xmx256m -Dtlsbridge.workdir="$WORK" ${JVM_OPTS:-} -cp "$CP" "$main" --server.address=127.0.0.1 \
    --server.port="$PORT" --spring.main.banner-mode=off "$@" >"$logf" 2>&1 &
  APP_PID=$!
  local i
  for i in $(seq 1 240); do
    grep -q "Started ${main#tbtest.} in" "$logf" && return 0
    kill -0 "$APP_PID" 2>/dev/null || { wait "$APP_PID" 2>/dev/null; APP_PID=; return 1; }
    sleep 0.25
  done
  return 1
}

URL() { echo "https://localhost:$PORT/tls"; }
ccurl() { curl -sS --max-time 20 --cacert "$PKI/ca.pem" --resolve "localhost:$PORT:127.0.0.1" "$@" "$(URL)" 2>&1; }
client() { "$JAVA" -cp "$CP" tbtest.Client "$(URL)" "$PKI/ca.pem" "$@" 2>&1; }
serial() { openssl s_client -connect "127.0.0.1:$PORT" -servername localhost </dev/null 2>/dev/null | openssl x509 -noout -serial 2>/dev/null; }
TB_SESSION=session=org.tlsbridge.engine.TlsBridgeSession

# served WHAT BODY EXPECTED...: one check that the body contains every expected token
served() {
  local what=$1 body=$2; shift 2
  local t ok=true
  for t in "$@"; do grep -qF -- "$t" <<<"$body" || ok=false; done
  $ok || echo "    got: $body"
  check "$what" $ok
}

# build_app BOOT-VERSION tomcat|jetty: compiles the app, sets CP
build_app() {
  local out=$WORK/build-$1-$2.log
  if ! mvn -B -q -f "$HERE/app/pom.xml" -Dboot.version="$1" -Dboot.server="$2" -Dmdep.outputFile="$WORK/cp-$1-$2.txt" \
      compile dependency:build-classpath >"$out" 2>&1; then
    tail -40 "$out"
    check "Spring Boot $1 ($2): the test app builds against Maven Central's artifacts" false
    return 1
  fi
  CP="$HERE/app/target/boot-$1-$2/classes:$(cat "$WORK/cp-$1-$2.txt"):$JAR"
}

# --- SNI and client-auth want on the servlet apps, and the WebFlux app (Reactor Netty) ---

# A second server certificate, for other.localhost only: served when a client asks for that name.
sni_pki() {
  [[ -f $PKI/other.pem ]] && return 0
  (
    cd "$PKI" || exit 1
    openssl req -newkey rsa:2048 -nodes -keyout other.key -subj /CN=other.localhost -out other.csr
    printf 'basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:other.localhost\n' >oext
    openssl x509 -req -in other.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile oext -out other.pem
  ) >>"$WORK/pki.log" 2>&1
}

# A default PEM bundle (encrypted key, CA as trust), a server-name bundle for
# other.localhost, client-auth want: the arguments of sni_want_checks' app.
SNI_WANT_ARGS=()
sni_want_args() {
  sni_pki
  SNI_WANT_ARGS=(--server.ssl.bundle=web --spring.ssl.bundle.pem.web.keystore.certificate="$PKI/server.pem"
    --spring.ssl.bundle.pem.web.keystore.private-key="$PKI/server.key"
    --spring.ssl.bundle.pem.web.keystore.private-key-password=key-secret
    --spring.ssl.bundle.pem.web.truststore.certificate="$PKI/ca.pem"
    --spring.ssl.bundle.pem.other.keystore.certificate="$PKI/other.pem"
    --spring.ssl.bundle.pem.other.keystore.private-key="$PKI/other.key"
    --spring.ssl.bundle.pem.other.truststore.certificate="$PKI/ca.pem"
    "--server.ssl.server-name-bundles[0].server-name=other.localhost"
    "--server.ssl.server-name-bundles[0].bundle=other" --server.ssl.client-auth=want)
}

# sni_want_checks LABEL: against a running app started with SNI_WANT_ARGS
sni_want_checks() {
  local b=$1
  served "$b: SNI other.localhost: its server-name bundle's certificate, served by tlsbridge" \
    "$(curl -sS -v --max-time 20 --http1.1 --cacert "$PKI/ca.pem" --resolve "other.localhost:$PORT:127.0.0.1" \
      "https://other.localhost:$PORT/tls" 2>&1)" "subject: CN=other.localhost" "$TB_SESSION"
  served "$b: SNI localhost: the default bundle's certificate, served by tlsbridge" \
    "$(ccurl -v --http1.1)" "subject: CN=localhost" "$TB_SESSION"
  served "$b: client-auth want, with a client certificate: the server sees it" \
    "$(ccurl --http1.1 --cert "$PKI/client.pem" --key "$PKI/client.key")" "$TB_SESSION" "peer=CN=suite client"
  served "$b: client-auth want, without one: served, no peer" "$(ccurl --http1.1)" "$TB_SESSION" "peer=-"
  served "$b: client-auth want: HttpClient on tlsbridge with a client key store" \
    "$(client HTTP_1_1 TLSv1.3 "$PKI/client.p12" client-secret)" status=200 "$TB_SESSION" "peer=CN=suite client"
}

# mtls_need_checks LABEL LOG: PKCS12 key store (key alias) + trust store, client-auth
# need, TLS 1.3 only, one cipher suite, HTTP/2 on; the app of the last build_app
mtls_need_checks() {
  local b=$1 L=$2 out
  if start_app "$L" --server.ssl.key-store="$PKI/server.p12" --server.ssl.key-store-type=PKCS12 \
      --server.ssl.key-store-password=store-secret --server.ssl.key-alias=server \
      --server.ssl.trust-store="$PKI/trust.p12" --server.ssl.trust-store-password=trust-secret \
      --server.ssl.client-auth=need --server.ssl.enabled-protocols=TLSv1.3 \
      --server.ssl.ciphers=TLS_AES_256_GCM_SHA384 --server.http2.enabled=true; then
    check "$b: app starts with key store, trust store, client-auth need" true
    served "$b: mTLS curl h2 with client certificate" \
      "$(ccurl --http2 --cert "$PKI/client.pem" --key "$PKI/client.key")" "$TB_SESSION" protocol=TLSv1.3 \
      cipher=TLS_AES_256_GCM_SHA384 "peer=CN=suite client" http=HTTP/2.0
    served "$b: mTLS HttpClient on tlsbridge with client key store" \
      "$(client HTTP_1_1 TLSv1.3 "$PKI/client.p12" client-secret)" status=200 "$TB_SESSION" "peer=CN=suite client"
    out=$(ccurl --http1.1)
    check "$b: mTLS without a client certificate: no response" bash -c "! grep -q session= <<<\"\$1\"" _ "$out"
    out=$(ccurl --http1.1 --tlsv1.2 --tls-max 1.2 --cert "$PKI/client.pem" --key "$PKI/client.key")
    check "$b: enabled-protocols=TLSv1.3 refuses TLS 1.2" bash -c "! grep -q session= <<<\"\$1\"" _ "$out"
  else
    tail -40 "$L"; check "$b: app starts with key store, trust store, client-auth need" false
  fi
  stop_app
}

# bad_store_password_check LABEL: a wrong key-store password fails the start with
# Spring Boot's error naming the store file (raised before any TLS stack sees it)
bad_store_password_check() {
  local b=$1 L=$WORK/badstore-${1// /-}.log
  if start_app "$L" --server.ssl.key-store="$PKI/server.p12" --server.ssl.key-store-password=wrong; then
    check "$b: wrong key-store password fails the start" false
  else
    served "$b: wrong key-store password fails the start with Spring Boot's error naming the file" \
      "$(grep -m1 'Could not load store from' "$L")" "$PKI/server.p12"
  fi
  stop_app
}

# servlet_sni_want_checks LABEL: the app of the last build_app; Spring Boot refuses
# server-name bundles with Jetty ("not supported"), so Jetty gets client-auth want only
servlet_sni_want_checks() {
  local b=$1 L=$WORK/sni-want-${1// /-}.log
  if [[ $b == *jetty* ]]; then
    if start_app "$L" --server.ssl.key-store="$PKI/server.p12" --server.ssl.key-store-password=store-secret \
        --server.ssl.trust-store="$PKI/trust.p12" --server.ssl.trust-store-password=trust-secret \
        --server.ssl.client-auth=want; then
      served "$b: client-auth want, with a client certificate: the server sees it" \
        "$(ccurl --http1.1 --cert "$PKI/client.pem" --key "$PKI/client.key")" "$TB_SESSION" "peer=CN=suite client"
      served "$b: client-auth want, without one: served, no peer" "$(ccurl --http1.1)" "$TB_SESSION" "peer=-"
    else
      tail -40 "$L"; check "$b: app starts with client-auth want" false
    fi
  elif sni_want_args && start_app "$L" "${SNI_WANT_ARGS[@]}"; then
    sni_want_checks "$b"
  else
    tail -40 "$L"; check "$b: app starts with server-name bundles and client-auth want" false
  fi
  stop_app
  [[ $b == *jetty* ]] || bad_store_password_check "$b"
}

# netty_checks BOOT-VERSION: the WebFlux app on Reactor Netty, TLS by tlsbridge
# under Netty's SslContext (JDK mode, sslContextProvider TLSBridge)
netty_checks() {
  local bv=$1 b="boot $1 netty" L out
  log "Spring Boot $bv: building the WebFlux test app (Reactor Netty)"
  build_app "$bv" netty || return 0
  local APP_MAIN=tbtest.FluxApp

  L=$WORK/netty-pem-$bv.log
  if start_app "$L" --server.ssl.bundle=web --spring.ssl.bundle.pem.web.keystore.certificate="$PKI/server.pem" \
      --spring.ssl.bundle.pem.web.keystore.private-key="$PKI/server.key" \
      --spring.ssl.bundle.pem.web.keystore.private-key-password=key-secret --server.http2.enabled=true; then
    check "$b: app starts with an SSL bundle: PEM certificate + encrypted key" true
    served "$b: start log names tlsbridge and OpenSSL" "$(grep -E 'served by tlsbridge' "$L")" "tlsbridge" "OpenSSL"
    served "$b: curl HTTP/1.1 TLS 1.2" "$(ccurl -v --http1.1 --tlsv1.2 --tls-max 1.2)" "$TB_SESSION" \
      "SSL connection using TLSv1.2" protocol=TLSv1.2 http=HTTP/1.1
    served "$b: curl HTTP/1.1 TLS 1.3" "$(ccurl -v --http1.1 --tlsv1.3)" "$TB_SESSION" \
      "SSL connection using TLSv1.3" protocol=TLSv1.3 http=HTTP/1.1
    served "$b: curl h2 TLS 1.2" "$(ccurl -v --http2 --tlsv1.2 --tls-max 1.2)" "$TB_SESSION" \
      "ALPN: server accepted h2" protocol=TLSv1.2 http=HTTP/2.0
    served "$b: curl h2 TLS 1.3" "$(ccurl -v --http2 --tlsv1.3)" "$TB_SESSION" \
      "ALPN: server accepted h2" protocol=TLSv1.3 http=HTTP/2.0
    served "$b: HttpClient on tlsbridge, h2 TLS 1.3" "$(client HTTP_2 TLSv1.3)" status=200 client-http=HTTP_2 \
      "$TB_SESSION" http=HTTP/2.0
    served "$b: HttpClient on tlsbridge, HTTP/1.1 TLS 1.2" "$(client HTTP_1_1 TLSv1.2)" status=200 "$TB_SESSION" \
      protocol=TLSv1.2
  else
    tail -40 "$L"; check "$b: app starts with an SSL bundle: PEM certificate + encrypted key" false
  fi
  stop_app

  mtls_need_checks "$b" "$WORK/netty-mtls-$bv.log"

  L=$WORK/netty-sni-want-$bv.log
  sni_want_args
  if start_app "$L" "${SNI_WANT_ARGS[@]}" --server.http2.enabled=true; then
    sni_want_checks "$b"
  else
    tail -40 "$L"; check "$b: app starts with server-name bundles and client-auth want" false
  fi
  stop_app

  bad_store_password_check "$b"

  L=$WORK/netty-off-$bv.log
  if start_app "$L" --server.ssl.key-store="$PKI/server.p12" --server.ssl.key-store-password=store-secret \
      --server.http2.enabled=true --tlsbridge.enabled=false; then
    served "$b: tlsbridge.enabled=false: JSSE serves h2" "$(ccurl --http2)" session=sun.security.ssl http=HTTP/2.0
  else
    tail -20 "$L"; check "$b: tlsbridge.enabled=false: app starts" false
  fi
  stop_app
}

for BV in $BOOT_VERSIONS; do
  log "Spring Boot $BV: building the test app"
  build_app "$BV" tomcat || continue
  B="boot $BV"

  # 1. an SSL bundle of PEM files (encrypted key) with reload-on-update, HTTP/2 on
  L=$WORK/pem-$BV.log
  cp "$PKI/server.pem" "$WORK/live.pem"; cp "$PKI/server.key" "$WORK/live.key"
  if start_app "$L" --server.ssl.bundle=web --spring.ssl.bundle.pem.web.reload-on-update=true \
      --spring.ssl.bundle.pem.web.keystore.certificate="$WORK/live.pem" \
      --spring.ssl.bundle.pem.web.keystore.private-key="$WORK/live.key" \
      --spring.ssl.bundle.pem.web.keystore.private-key-password=key-secret \
      --spring.ssl.bundle.watch.file.quiet-period=1s --server.http2.enabled=true; then
    check "$B: app starts with an SSL bundle: PEM certificate + encrypted key" true
    served "$B: start log names tlsbridge and OpenSSL" "$(grep -E 'served by (org.tlsbridge|tlsbridge)' "$L")" "tlsbridge" "OpenSSL"
    served "$B: curl HTTP/1.1 TLS 1.2" "$(ccurl -v --http1.1 --tlsv1.2 --tls-max 1.2)" "$TB_SESSION" \
      "SSL connection using TLSv1.2" http=HTTP/1.1
    served "$B: curl HTTP/1.1 TLS 1.3" "$(ccurl -v --http1.1 --tlsv1.3)" "$TB_SESSION" \
      "SSL connection using TLSv1.3" http=HTTP/1.1
    served "$B: curl h2 TLS 1.2" "$(ccurl -v --http2 --tlsv1.2 --tls-max 1.2)" "$TB_SESSION" \
      "SSL connection using TLSv1.2" http=HTTP/2.0
    served "$B: curl h2 TLS 1.3" "$(ccurl -v --http2 --tlsv1.3)" "$TB_SESSION" "SSL connection using TLSv1.3" http=HTTP/2.0
    served "$B: HttpClient on tlsbridge, h2 TLS 1.3" "$(client HTTP_2 TLSv1.3)" status=200 client-http=HTTP_2 \
      "$TB_SESSION" http=HTTP/2.0
    served "$B: HttpClient on tlsbridge, HTTP/1.1 TLS 1.2" "$(client HTTP_1_1 TLSv1.2)" status=200 "$TB_SESSION" \
      protocol=TLSv1.2

    # bundle reload: new files, new certificate for new connections, the open one keeps working
    old_serial=$(serial)
    coproc RC { timeout 60 python3 "$HERE/../lib/reload_client.py" "$PORT" "$PKI/ca.pem" 2>&1; }
    read -r -t 20 first <&"${RC[0]}"
    served "$B: reload: a keep-alive connection before the rotation" "$first" "$TB_SESSION"
    cp "$PKI/server2.key" "$WORK/live.key"; cp "$PKI/server2.pem" "$WORK/live.pem"
    new_serial=$old_serial
    t0=$(date +%s%N)
    for _ in $(seq 1 60); do
      new_serial=$(serial); [[ $new_serial != "$old_serial" ]] && break; sleep 0.5
    done
    echo "  reload: new certificate served $(( ($(date +%s%N) - t0) / 1000000 )) ms after the files changed (quiet period 1 s)"
    check "$B: reload: new connections get the new certificate ($old_serial -> $new_serial)" \
      test "$new_serial" = "$(openssl x509 -in "$PKI/server2.pem" -noout -serial)"
    served "$B: reload: new connection served by tlsbridge" "$(ccurl --http1.1)" "$TB_SESSION"
    echo go >&"${RC[1]}"
    read -r -t 20 second <&"${RC[0]}"
    served "$B: reload: the connection opened before it still works" "$second" "$TB_SESSION" same-connection=True
    wait "$RC_PID" 2>/dev/null
  else
    tail -40 "$L"
    check "$B: app starts with an SSL bundle: PEM certificate + encrypted key" false
  fi
  stop_app

  # 2. key store + trust store, client-auth need, TLS 1.3 only
  mtls_need_checks "$B" "$WORK/mtls-$BV.log"

  # 3. wrong key password. In a PEM bundle Spring Boot decrypts the key itself, before any
  # TLS stack sees it; in a key store Tomcat's SSLUtil does, inside tlsbridge's adapter: the
  # start must fail there with the very error JSSE gives.
  L=$WORK/badpw-$BV.log
  if start_app "$L" --server.ssl.bundle=web --spring.ssl.bundle.pem.web.keystore.certificate="$PKI/server.pem" \
      --spring.ssl.bundle.pem.web.keystore.private-key="$PKI/server.key" \
      --spring.ssl.bundle.pem.web.keystore.private-key-password=wrong; then
    check "$B: wrong PEM key password fails the start" false
  else
    served "$B: wrong PEM key password fails the start with Spring Boot's error" \
      "$(grep -E 'Caused by' "$L" | head -5)" "Error loading private key file"
  fi
  stop_app
  root_cause() { grep -E '^Caused by' "$1" | tail -1; }
  for impl in tlsbridge jsse; do
    L=$WORK/badks-$impl-$BV.log
    if start_app "$L" --server.ssl.key-store="$PKI/server.p12" --server.ssl.key-store-password=store-secret \
        --server.ssl.key-password=wrong --tlsbridge.enabled=$([[ $impl == tlsbridge ]] && echo true || echo false); then
      check "$B: wrong key store key password fails the start ($impl)" false
    fi
    stop_app
  done
  tb_err=$(root_cause "$WORK/badks-tlsbridge-$BV.log")
  check "$B: wrong key store key password: the start fails with JSSE's own error ($tb_err)" \
    test -n "$tb_err" -a "$tb_err" = "$(root_cause "$WORK/badks-jsse-$BV.log")"
  served "$B: ... raised while creating tlsbridge's context" "$(grep -E 'at org.tlsbridge' "$WORK/badks-tlsbridge-$BV.log" | head -3)" org.tlsbridge.tomcat

  # 4. off switch, unloadable library (WARN, JSSE), required
  L=$WORK/off-$BV.log
  if start_app "$L" --server.ssl.key-store="$PKI/server.p12" --server.ssl.key-store-password=store-secret \
      --tlsbridge.enabled=false; then
    served "$B: tlsbridge.enabled=false: JSSE serves" "$(ccurl --http1.1)" session=sun.security.ssl
  else
    tail -20 "$L"; check "$B: tlsbridge.enabled=false: app starts" false
  fi
  stop_app
  L=$WORK/nolib-$BV.log
  JVM_OPTS=-Dtlsbridge.library.path=/nonexistent/libtlsbridge.so
  if start_app "$L" --server.ssl.key-store="$PKI/server.p12" --server.ssl.key-store-password=store-secret; then
    served "$B: library cannot load: JSSE serves" "$(ccurl --http1.1)" session=sun.security.ssl
    served "$B: library cannot load: one WARN naming the reason" \
      "$(grep -c 'WARN.*TLS stays on the JDK.*libtlsbridge.so' "$L") $(grep 'WARN.*TLS stays' "$L")" "1 " "/nonexistent"
  else
    tail -20 "$L"; check "$B: library cannot load: app starts on JSSE" false
  fi
  stop_app
  L=$WORK/required-$BV.log
  if start_app "$L" --server.ssl.key-store="$PKI/server.p12" --server.ssl.key-store-password=store-secret \
      --tlsbridge.required=true; then
    check "$B: tlsbridge.required=true and no library: the start fails" false
  else
    served "$B: tlsbridge.required=true and no library: the start fails, naming the reason" \
      "$(grep 'tlsbridge.required=true' "$L" | head -2)" "/nonexistent"
  fi
  stop_app
  JVM_OPTS=
  servlet_sni_want_checks "$B"

  # 5. embedded Jetty: the TLSBridge provider on Spring Boot's SslContextFactory.Server
  log "Spring Boot $BV: building the test app with Jetty"
  build_app "$BV" jetty || continue
  B="boot $BV jetty"
  L=$WORK/jetty-$BV.log
  if start_app "$L" --server.ssl.key-store="$PKI/server.p12" --server.ssl.key-store-password=store-secret \
      --server.ssl.trust-store="$PKI/trust.p12" --server.ssl.trust-store-password=trust-secret \
      --server.ssl.client-auth=need; then
    check "$B: app starts with key store, trust store, client-auth need" true
    served "$B: start log names tlsbridge and OpenSSL" "$(grep -E 'served by tlsbridge' "$L")" "tlsbridge" "OpenSSL"
    served "$B: mTLS curl HTTP/1.1 TLS 1.2" \
      "$(ccurl -v --http1.1 --tlsv1.2 --tls-max 1.2 --cert "$PKI/client.pem" --key "$PKI/client.key")" \
      "$TB_SESSION" "SSL connection using TLSv1.2" "peer=CN=suite client"
    served "$B: mTLS curl HTTP/1.1 TLS 1.3" \
      "$(ccurl -v --http1.1 --tlsv1.3 --cert "$PKI/client.pem" --key "$PKI/client.key")" \
      "$TB_SESSION" "SSL connection using TLSv1.3" "peer=CN=suite client"
    served "$B: mTLS HttpClient on tlsbridge" "$(client HTTP_1_1 TLSv1.3 "$PKI/client.p12" client-secret)" \
      status=200 "$TB_SESSION" "peer=CN=suite client"
    out=$(ccurl --http1.1)
    check "$B: mTLS without a client certificate: no response" bash -c "! grep -q session= <<<\"\$1\"" _ "$out"
  else
    tail -40 "$L"
    check "$B: app starts with key store, trust store, client-auth need" false
  fi
  stop_app
  # h2 needs an ALPN processor for tlsbridge's engine; without one the connector must stay on JSSE, working
  L=$WORK/jetty-h2-$BV.log
  if start_app "$L" --server.ssl.key-store="$PKI/server.p12" --server.ssl.key-store-password=store-secret \
      --server.http2.enabled=true; then
    if ! python3 -c 'import sys, zipfile
sys.exit(not any(n.startswith("org/tlsbridge/jetty/") for n in zipfile.ZipFile(sys.argv[1]).namelist()))' "$JAR"; then
      served "$B: h2 without a tlsbridge ALPN processor: one WARN, JSSE serves h2" \
        "$(grep -c 'WARN.*stays on JSSE: ALPN' "$L") $(ccurl --http2)" "1 " session=sun.security.ssl http=HTTP/2.0
    else
      served "$B: h2 through tlsbridge's ALPN processor" "$(ccurl -v --http2)" "$TB_SESSION" http=HTTP/2.0
    fi
  else
    tail -40 "$L"
    check "$B: app starts with server.http2.enabled=true" false
  fi
  stop_app
  servlet_sni_want_checks "$B"
done
for BV in $BOOT_VERSIONS; do
  netty_checks "$BV"
done
finish
