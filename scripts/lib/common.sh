# Shared by scripts/test and scripts/bench: package installs and small helpers.
# shellcheck shell=bash

TB_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
export TB_ROOT

log() { printf '\033[1m[tlsbridge]\033[0m %s\n' "$*" >&2; }
die() { printf '\033[31m[tlsbridge] %s\033[0m\n' "$*" >&2; exit 1; }

_tb_apt_updated=0
# need_pkgs PKG...: installs the Debian packages that are missing (as root).
need_pkgs() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || die "missing packages (${missing[*]}) and not root"
    SUDO=sudo
  else
    SUDO=
  fi
  log "installing: ${missing[*]}"
  if ((_tb_apt_updated == 0)); then
    $SUDO apt-get update -qq || log "apt-get update failed; trying with the cached lists"
    _tb_apt_updated=1
  fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
    || die "apt-get install ${missing[*]} failed"
}

# The packages every build needs: compiler, CMake, OpenSSL headers, a JDK with jni.h, Maven.
need_build_pkgs() {
  need_pkgs build-essential cmake pkg-config libssl-dev openssl openjdk-17-jdk-headless maven curl ca-certificates \
    python3 wrk siege
}

# The probe's toolchain (CO-RE BPF).
need_probe_pkgs() {
  need_pkgs clang libbpf-dev bpftool libelf-dev zlib1g-dev pkg-config jq binutils bc
}

jdk17_home() {
  local j
  for j in /usr/lib/jvm/java-17-openjdk-amd64 /usr/lib/jvm/java-17-openjdk-*; do
    [[ -x $j/bin/javac ]] && { echo "$j"; return; }
  done
  dirname "$(dirname "$(readlink -f "$(command -v javac)")")"
}

jdk25_home() {
  local j
  for j in /usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/temurin-25*; do
    [[ -x $j/bin/java ]] && { echo "$j"; return; }
  done
}
