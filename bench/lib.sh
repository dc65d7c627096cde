# Shared by the device scripts in bench/: `step NAME CMD...` runs one check (bounded by STEP_TIMEOUT seconds,
# default 600, so a hung kernel costs minutes, not the device session), prints its verdict lines, and counts it
# in `failures` when it exits non-zero or reports a mismatch.
failures=0
step() { # NAME CMD...
  local name=$1; shift
  local log; log=$(timeout "${STEP_TIMEOUT:-600}" "$@" 2>&1); local rc=$?
  echo "-- $name (exit $rc)"
  grep -E "^check |ERROR SUMMARY|RACECHECK SUMMARY|^error|wrong|MISMATCH|in the interpreter" <<<"$log"
  if [[ $rc -ne 0 ]] || grep -qE "MISMATCH|in the interpreter over" <<<"$log"; then
    failures=$((failures + 1)); echo "$log" | tail -20
  fi
}
