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
