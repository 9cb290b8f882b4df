# Sourced by run.sh (uses its helpers): a JVM serving HTTPS through the
# tlsbridge provider from $JAR (library extracted to a temporary directory),
# watched in provider+agnostic mode while curl makes a known number of
# connections and requests. The truth is curl's own tally: connections made
# (one full handshake each, separate curl processes share no sessions) and
# the plaintext bytes of requests and responses.
jvm_name="JVM + tlsbridge: counts vs curl's tally"
if start_server tbjvm tlsbridge "$JAR"; then
  if ! grep -q '^provider TLSBridge' "$T/tbjvm.sout"; then
    bad "$jvm_name" "server did not pick tlsbridge: $(tail -3 "$T/tbjvm.sout")"
  elif start_probe tbjvm -p "$SRV_PID" --mode provider,agnostic --json -i 1; then
    for i in $(seq 30); do
      curl -sk --max-time 10 -w '%{num_connects} %{size_request} %{size_header} %{size_download}\n' \
        "https://127.0.0.1:$SRV_PORT/r$i/[1-4]" -o /dev/null
    done >"$T/curl.tally"
    sleep 1.5 # engines are freed when jdk.httpserver closes the connection
    stop_probe
    read -r conns req resp < <(awk '{c+=$1; q+=$2; r+=$3+$4} END{printf "%d %d %d\n", c, q, r}' "$T/curl.tally")
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
