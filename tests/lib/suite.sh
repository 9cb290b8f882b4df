# Shared by the integration suites (tests/*/run.sh): one PASS/FAIL line per
# check and the SUMMARY line scripts/test reads for its table.
# shellcheck shell=bash
#
#   SUITE=name; NOT_RUN_RC=0|1; source tests/lib/suite.sh
# NOT_RUN_RC: what not_run exits with. 0 lets scripts/test show a loud NOT RUN
# row; 1 fails the run (for suites whose prerequisites CI must always have).
PASS=0
FAIL=0
check() { # name, then a command; one line per check
  local name=$1; shift
  if "$@"; then echo "PASS $SUITE: $name"; PASS=$((PASS + 1)); else echo "FAIL $SUITE: $name"; FAIL=$((FAIL + 1)); fi
}
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

# suite_ca: a throw-away CA (ca.key, ca.pem) in the current directory, valid two days.
suite_ca() {
  openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj "/CN=tlsbridge suite CA" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
}
