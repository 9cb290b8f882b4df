# Shared by the integration suites (tests/*/run.sh): one PASS/FAIL line per
# check and the SUMMARY line scripts/test reads for its table.
# shellcheck shell=bash
#
#   SUITE=name; NOT_RUN_RC=0|1; source "$(dirname "$0")/../lib/suite.sh"
# NOT_RUN_RC: what not_run exits with. 0 lets scripts/test show a loud NOT RUN
# row; 1 fails the run (for suites whose prerequisites CI must always have).
# It loads scripts/lib/common.sh, unless the suite did, and tests/lib/wait.sh,
# and runs the suite from the repository's root: the opening every suite had.
declare -F need_pkgs >/dev/null || source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/wait.sh"
cd "$TB_ROOT" || exit 1
PASS=0
FAIL=0
check() { # name, then a command; one line per check
  local name=$1; shift
  if "$@"; then echo "PASS $SUITE: $name"; PASS=$((PASS + 1)); else echo "FAIL $SUITE: $name"; FAIL=$((FAIL + 1)); fi
}
# ok NAME / bad NAME [WHY]: the PASS or FAIL line of a check that is more than one command.
ok() { echo "PASS $SUITE: $1"; PASS=$((PASS + 1)); }
bad() { echo "FAIL $SUITE: $1${2:+: $2}"; FAIL=$((FAIL + 1)); }
finish() {
  echo "SUMMARY $SUITE: $PASS passed, $FAIL failed"
  ((FAIL == 0))
  exit $?
}
not_run() { echo "NOT RUN: $SUITE: $*"; echo "SUMMARY $SUITE: $PASS passed, $FAIL failed"; exit "${NOT_RUN_RC:-0}"; }

# free_port: a TCP port on 127.0.0.1 that nothing listens on now.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }

# suite_jar: JAR=the absolute path of target/tlsbridge-*.jar, packaged first if missing (not_run if that fails).
suite_jar() {
  JAR=$(ls target/tlsbridge-*.jar 2>/dev/null | grep -v -e sources -e javadoc | head -1)
  if [[ -z $JAR ]]; then
    echo "no tlsbridge jar in target/: packaging it" >&2
    mvn -B -q -DskipTests -DskipCtest=true package >/dev/null 2>&1
    JAR=$(ls target/tlsbridge-*.jar 2>/dev/null | grep -v -e sources -e javadoc | head -1)
  fi
  [[ -n $JAR ]] || not_run "cannot build the tlsbridge jar"
  JAR=$(readlink -f "$JAR")
}

# suite_classes: target/classes with the native library in it, from mvn package when
# either is missing (for suites that run the JVM side from the classes); false when
# the build fails.
suite_classes() {
  [[ -f target/classes/org/tlsbridge/TlsBridgeProvider.class &&
     -f target/classes/META-INF/native/linux-x86_64/libtlsbridge.so ]] && return 0
  log "building tlsbridge (mvn package)"
  mvn -B -q package -DskipTests -DskipCtest=true >/dev/null
}

# suite_work NAME: WORK=a new directory /tmp/tb-NAME.XXXXXX, and PIDS=() for the
# background processes the suite starts. At exit each of PIDS is killed and waited
# for, then WORK is removed (kept when KEEP_WORK is set, for a look after a failure).
suite_work() {
  WORK=$(mktemp -d "/tmp/tb-$1.XXXXXX") || not_run "cannot make a work directory under /tmp"
  PIDS=()
  trap suite_cleanup EXIT
}
suite_cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  [[ -n ${KEEP_WORK:-} ]] || rm -rf "$WORK"
}

# suite_ca: a throw-away CA (ca.key, ca.pem) in the current directory, valid two days.
suite_ca() {
  openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj "/CN=tlsbridge suite CA" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
}
