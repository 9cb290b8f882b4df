# The C compiler of the jar's linux-x86_64 and -aarch64 libraries: Zig's
# `zig cc` (clang with its own C library headers and link stubs), which builds
# on Debian 12 for <arch>-linux-gnu.2.17, so that a library built here asks no
# more than glibc 2.17 of its host (RHEL 8, SLES 15, Amazon Linux 2 and
# later). Zig comes from PyPI (the `ziglang` wheel), pinned, installed with
# pip --target into the cache rather than into any Python environment.
# tb_zig_tools TARGET writes small wrappers <target>-cc, -ar and -ranlib (one
# executable each: CMake and OpenSSL's Configure want a program, not a command
# line) and prints their directory. Sourced by scripts/zig,
# scripts/lib/openssl.sh; needs common.sh.
# shellcheck shell=bash

TB_CACHE=${TB_CACHE:-/var/cache/tlsbridge}
TB_ZIG_VERSION=0.17.0
TB_ZIG_DIR=$TB_CACHE/zig/$TB_ZIG_VERSION
# What every compile with Zig adds, OpenSSL's and tlsbridge's alike, so that
# the code costs no more instructions than gcc's did (tests/icount): Zig's
# driver keeps frame pointers unless told (-mframe-pointer=all: a register
# less and a push/pop in every function), and reads any -O1 to -O3 as its
# own release mode, which it hands clang as -O2 (OpenSSL's Configure asks for
# -O3); -Xclang -O3 reaches clang's compiler proper, where the last -O wins.
# -g0: it emits debug information unless told not to (14 MB of OpenSSL's in
# the bundled library).
TB_ZIG_CFLAGS=(-fomit-frame-pointer -g0 -Xclang -O3)

# tb_zig: installs the pinned ziglang wheel if it is not there; prints the
# zig executable.
tb_zig() {
  local zig=$TB_ZIG_DIR/py/ziglang/zig lock tmp
  if [[ -x $zig ]]; then
    echo "$zig"
    return 0
  fi
  mkdir -p "$TB_CACHE/zig" || die "cannot create $TB_CACHE/zig"
  exec {lock}>"$TB_ZIG_DIR.lock"
  flock "$lock"
  if [[ ! -x $zig ]]; then
    need_pkgs python3-pip
    log "installing Zig $TB_ZIG_VERSION (PyPI ziglang, about 50 MB) into $TB_ZIG_DIR"
    tmp=$(mktemp -d "$TB_CACHE/zig/.py-XXXXXX") || die "mktemp failed"
    python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --no-deps --target "$tmp" "ziglang==$TB_ZIG_VERSION" >&2 \
      || { rm -rf "$tmp"; die "pip install ziglang==$TB_ZIG_VERSION failed"; }
    mkdir -p "$TB_ZIG_DIR" && rm -rf "$TB_ZIG_DIR/py" && mv -T "$tmp" "$TB_ZIG_DIR/py" || die "cannot move Zig into $TB_ZIG_DIR"
  fi
  exec {lock}>&-
  echo "$zig"
}

# tb_zig_tools TARGET (x86_64-linux-gnu.2.17, aarch64-linux-musl, ...):
# prints the directory holding TARGET-cc, TARGET-ar and TARGET-ranlib.
tb_zig_tools() {
  local target=$1 zig dir=$TB_ZIG_DIR/bin t
  [[ $target =~ ^(x86_64|aarch64)-linux-(gnu\.2\.17|musl)$ ]] || die "no Zig target '$target' (x86_64|aarch64)-linux-(gnu.2.17|musl)"
  zig=$(tb_zig) || return 1
  mkdir -p "$dir" || die "cannot create $dir"
  if [[ ! -x $dir/$target-cc || $(sed -n 2p "$dir/$target-cc") != "# v2"* ]]; then
    # Zig keeps compiled C library stubs in its cache, shared by every build.
    for t in ar ranlib; do
      printf '#!/bin/sh\n# zig %s for %s (scripts/lib/zig.sh)\nexec %q %s "$@"\n' "$t" "$target" "$zig" "$t" \
        >"$dir/.$target-$t.$$" && chmod +x "$dir/.$target-$t.$$" && mv -f "$dir/.$target-$t.$$" "$dir/$target-$t" ||
        die "cannot write $dir/$target-$t"
    done
    # Zig's cc cannot read C from stdin ("-"), which OpenSSL's Configure
    # does to probe for <linux/tls.h> (without it, kTLS is silently left
    # out): the wrapper hands it a file instead.
    cat >"$dir/.$target-cc.$$" <<EOF || die "cannot write $dir/$target-cc"
#!/bin/bash
# v2: zig cc for $target (scripts/lib/zig.sh); C on stdin goes through a file
for a in "\$@"; do
  if [[ \$a == - ]]; then
    t=\$(mktemp --suffix=.c) || exit 1
    cat >"\$t"
    args=()
    for b in "\$@"; do [[ \$b == - ]] && args+=("\$t") || args+=("\$b"); done
    $(printf %q "$zig") cc -target $target "\${args[@]}"
    rc=\$?
    rm -f "\$t"
    exit \$rc
  fi
done
exec $(printf %q "$zig") cc -target $target "\$@"
EOF
    chmod +x "$dir/.$target-cc.$$" && mv -f "$dir/.$target-cc.$$" "$dir/$target-cc" || die "cannot write $dir/$target-cc"
  fi
  echo "$dir"
}
