#!/usr/bin/env bash
# Compiles BenchmarkSSLSocket against the tlsbridge classes of this checkout
# (run `mvn -B -q package -DskipTests` or `mvn -B -q verify` first) and prints
# the classpath to run it with:
#   java -cp "$(bench/sslsocket/build.sh)" BenchmarkSSLSocket TLSBridge.SSLSocket server.p12 pass 8443 1024
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$root/target/bench-sslsocket
classes=$root/target/classes
[[ -f $classes/org/tlsbridge/TlsBridgeProvider.class ]] || { echo "build tlsbridge first (mvn -B -q package -DskipTests)" >&2; exit 1; }
mkdir -p "$out"
src=$root/bench/sslsocket/src/BenchmarkSSLSocket.java
if [[ ! -f $out/BenchmarkSSLSocket.class || $src -nt $out/BenchmarkSSLSocket.class ]]; then
  javac --release 17 -d "$out" "$src" >&2
fi
echo "$out:$classes"
