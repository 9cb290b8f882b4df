# Waiting for a process started in the background to say something, or to end.
# shellcheck shell=bash
#
#   source tests/lib/wait.sh
# wait_for_line FILE REGEX PID: polls every 0.1 s, for up to 60 s, until a line
# of FILE matches REGEX (grep) or PID has exited, so a server that died is not
# waited for; true if the line is there.
wait_for_line() {
  local file=$1 regex=$2 pid=$3 i
  for i in $(seq 600); do
    grep -q -- "$regex" "$file" 2>/dev/null && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  grep -q -- "$regex" "$file" 2>/dev/null
}

# wait_for_exit PID TENTHS: gives PID, already asked to stop, up to TENTHS tenths
# of a second to exit, then kills it; reaps it either way.
wait_for_exit() {
  local pid=$1 i
  for i in $(seq "$2"); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
}
