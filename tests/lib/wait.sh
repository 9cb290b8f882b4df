# Waiting for a process started in the background to say something.
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
