# Sourced by run.sh (uses its helpers): a JVM serving HTTPS through the
# tlsbridge provider from $JAR (library extracted to a temporary directory),
# watched in provider+agnostic mode while curl makes a known number of
# connections and requests. The truth is curl's own tally: connections made
# (one full handshake each, separate curl processes share no sessions) and
# the plaintext bytes of requests and responses. OpenSSL 3.5's s_client then
# makes a few more handshakes, which the bundled OpenSSL serves with
# X25519MLKEM768: the probe's groups must show both (curl's OpenSSL 3.0 gets x25519).
O35=$(bash -c 'source "$1/scripts/lib/common.sh"; source "$1/scripts/lib/openssl.sh"; tb_openssl_dir 3.5' - "$ROOT")/bin/openssl
PQ_CONNS=3
jvm_name="JVM + tlsbridge: counts vs curl's tally"
if start_server tbjvm tlsbridge "$JAR"; then
  if ! grep -q '^provider TLSBridge' "$T/tbjvm.sout"; then
    bad "$jvm_name" "server did not pick tlsbridge: $(tail -3 "$T/tbjvm.sout")"
  elif start_probe tbjvm -p "$SRV_PID" --mode provider,agnostic --json -i 1; then
    # The header names the OpenSSL serving, which the bundled flavour links
    # inside its library (no libcrypto mapped): as the jar itself reports it.
    want_ossl="$("$JAVA" -jar "$JAR" | sed -n 's/^openssl \(.*\) (bundled;.*/\1/p'), inside libtlsbridge-bundled.so"
    got_ossl=$(head -1 "$PROBE_OUT" | jq -r .openssl)
    if [[ $got_ossl == "$want_ossl" && $want_ossl == "OpenSSL "* ]]; then
      ok "probe: JSON meta names the bundled OpenSSL" "$got_ossl"
    else
      bad "probe: JSON meta names the bundled OpenSSL" "openssl \"$got_ossl\", want \"$want_ossl\""
    fi
    for i in $(seq 30); do
      curl -sk --max-time 10 -w '%{num_connects} %{size_request} %{size_header} %{size_download}\n' \
        "https://127.0.0.1:$SRV_PORT/r$i/[1-4]" -o /dev/null
    done >"$T/curl.tally"
    pq_made=0
    if [[ -x $O35 ]]; then
      for i in $(seq $PQ_CONNS); do
        "$O35" s_client -connect "127.0.0.1:$SRV_PORT" -brief </dev/null >"$T/s_client35.out" 2>&1 &&
          pq_made=$((pq_made + 1))
      done
    else
      bad "probe: X25519MLKEM768 handshakes" "OpenSSL 3.5's openssl is MISSING at $O35 (scripts/openssl builds it)"
    fi
    sleep 1.5 # engines are freed when jdk.httpserver closes the connection
    stop_probe
    timeout 60 "$PROBE" -p "$SRV_PID" --mode provider -d 1 -i 0 --no-calibrate >"$T/human.probe" 2>&1
    got_ossl=$(grep -m1 "^  kernel " "$T/human.probe")
    if [[ $got_ossl == *", $want_ossl" ]]; then
      ok "probe: human header names the bundled OpenSSL" "$got_ossl"
    else
      bad "probe: human header names the bundled OpenSSL" "header \"$got_ossl\", want \"..., $want_ossl\""
    fi
    read -r conns req resp < <(awk '{c+=$1; q+=$2; r+=$3+$4} END{printf "%d %d %d\n", c, q, r}' "$T/curl.tally")
    if [[ -x $O35 ]]; then
      groups=$(tail -1 "$PROBE_OUT" | jq -c .groups)
      if [[ $(field '.groups.X25519MLKEM768 // 0') == "$PQ_CONNS" && $pq_made == "$PQ_CONNS" &&
            $(field '.groups.x25519 // 0') == "$conns" ]]; then
        ok "probe: the group of each handshake (s_client 3.5 and curl)" "$groups"
      else
        bad "probe: the group of each handshake (s_client 3.5 and curl)" \
          "groups $groups, want X25519MLKEM768:$PQ_CONNS x25519:$conns ($pq_made s_client ran: $(tail -3 "$T/s_client35.out"))"
      fi
      conns=$((conns + pq_made))
    fi
    msgs=()
    within "$(field .handshakes)" "$conns" 1 || msgs+=("handshakes $(field .handshakes) vs $conns connections")
    within "$(field .app_bytes_in)" "$req" 1 || msgs+=("app_bytes_in $(field .app_bytes_in) vs $req")
    within "$(field .app_bytes_out)" "$resp" 1 || msgs+=("app_bytes_out $(field .app_bytes_out) vs $resp")
    [[ $(field .closes) == "$conns" ]] || msgs+=("closes $(field .closes) vs $conns")
    (($(field .bytes_out) > $(field .app_bytes_out))) || msgs+=("TLS bytes_out not above plaintext")
    info="handshakes $(field .handshakes)/$conns, plaintext in $(field .app_bytes_in)/$req out $(field .app_bytes_out)/$resp"
    info+=", TLS out $(field .bytes_out) vs socket writes $(field .sys_bytes_out)"
    if ((${#msgs[@]})); then bad "$jvm_name" "${msgs[*]}"; else ok "$jvm_name" "$info"; fi
  else
    bad "$jvm_name" "probe did not attach: $(cat "$PROBE_ERR")"
  fi
  stop_server
else
  bad "$jvm_name" "server did not start: $(tail -5 "$T/tbjvm.sout")"
fi
