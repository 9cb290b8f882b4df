#!/usr/bin/env bash
# Instruction counts per TLS record (bench/recordpath/recordpath.c) under
# callgrind, against the system OpenSSL and each cached bundled build
# (scripts/lib/openssl.sh): OpenSSL's record path over a BIO pair, EVP
# sealing/opening alone, and libssl with its kTLS controls taken by a
# memory BIO that does the crypto (where libssl is built with kTLS: the
# system's; the bundled builds are configured without it, so a prefix
# where an `enable-ktls` build was installed with `make install_dev` can
# be named too). The figures and what they decided are in
# docs/record-path.md ("kTLS-interface record path"). Deterministic: a
# busy machine does not move them. Where libssl has kTLS it also prints
# whether a plain OpenSSL peer accepts the BIO's records and the BIO the
# peer's (data, KeyUpdates, close_notify; "recordpath check" lines) and
# what a refused write retried from a moved buffer sends.
#
#   bench/recordpath/run.sh [records-per-region [openssl-prefix...]]   (default 64)
set -euo pipefail
source "$(dirname "$0")/../../scripts/lib/common.sh"
source "$TB_ROOT/scripts/lib/openssl.sh"
cd "$TB_ROOT"
need_pkgs valgrind build-essential libssl-dev linux-libc-dev
N=${1:-64}
shift $(($# > 0))
OUT=target/recordpath
mkdir -p "$OUT"

build() { # name, then extra cc arguments
  local name=$1
  shift
  cc -std=c11 -O2 -g -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
    -Wno-unused-parameter -D_GNU_SOURCE -Inative/core -Inative/include -Itests/fuzz -Itests/icount \
    "$@" -o "$OUT/recordpath-$name"
}

measure() { # name
  local exe=$OUT/recordpath-$1 cg=$OUT/cg-$1
  rm -f "$cg".*
  valgrind --tool=callgrind --collect-atstart=no --dump-instr=no --compress-strings=no \
    --callgrind-out-file="$cg" "$exe" "$N" >"$OUT/$1.log" 2>"$OUT/$1.err" ||
    { cat "$OUT/$1.err" >&2; return 1; }
  grep '^recordpath' "$OUT/$1.log" | grep -v '^recordpath ok'
  python3 - "$cg" <<'EOF'
import glob, re, sys
rows = {}
for f in glob.glob(sys.argv[1] + ".*"):
    t = open(f).read()
    m = re.search(r"^desc: Trigger: Client Request: (\S+) (\S+) (\d+) x(\d+)$", t, re.M)
    n = re.search(r"^totals: (\d+)", t, re.M)
    if m and n:
        rows.setdefault((m.group(1), int(m.group(3))), {})[m.group(2)] = int(n.group(1)) // int(m.group(4))
print("| path | bytes | send (write/seal) | receive (read/open) | pair |")
print("|---|---|---|---|---|")
for (what, size), d in sorted(rows.items(), key=lambda kv: (kv[0][0][-2:], kv[0][1], kv[0][0])):
    a, b = d.get("write", d.get("seal")), d.get("read", d.get("open"))
    print(f"| {what} | {size} | {a:,} | {b:,} | {a + b:,} |")
EOF
}

SRCS=(bench/recordpath/recordpath.c bench/recordpath/recordpath_bio.c tests/fuzz/fuzz_rand.c)
build system "${SRCS[@]}" -lssl -lcrypto
echo "## system libssl"
measure system
for d in "$(tb_openssl_dir 3.5)" "$(tb_openssl_dir 4.0)" "$@"; do
  if [[ ! -f $d/lib/libssl.a ]]; then
    echo "## $d: NOT RUN (no static libssl there; scripts/lib/openssl.sh builds the bundled ones)"
    continue
  fi
  name=$(basename "$d")
  build "$name" -I"$d/include" "${SRCS[@]}" "$d/lib/libssl.a" "$d/lib/libcrypto.a" -ldl -pthread
  echo "## $d"
  measure "$name"
done
