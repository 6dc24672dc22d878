# Sourced by run-conformance.sh (server scenarios) and
# run-conformance-client.sh (client scenarios): what they share. Not run
# on its own.
#
# The caller sets, before `conformance_main "$@"`:
#   kind          server | client (the suite's subcommand)
#   target_flag   the suite's flag naming the target: --url | --command
#   usage_target  what the target is in the usage line: URL | CMD
#   label         the summary line's name ("conformance", "conformance client")
#   verdict       the verdict script (a path)
#   defaults      the scenarios run when none is named (an array)
# and defines
#   verdict_arg CHECKS DIR  the verdict script's second argument, from the
#                 checks.json found (empty if none) and the scenario's
#                 directory (its results are in DIR/results)
#
# conformance_main TARGET [SCENARIO...] runs the suite (Node 22 from
# interop/node_modules: the suite crashes on Node 20) one scenario at a
# time, prints the verdict script's "PASS name" or "FAIL name: reason" for
# each, then "LABEL: N passed, M failed", and exits 1 if any scenario
# failed, 2 on a setup error.
#
# Environment:
#   CONFORMANCE_OUT              keep results/logs here (default: a temp dir)
#   CONFORMANCE_TIMEOUT          seconds per scenario (default 120)
#   CONFORMANCE_ALLOW_WARNINGS=1 do not fail on WARNING checks (read by the
#                                verdict scripts)

here=$(cd "$(dirname "$0")" && pwd)
node="$here/node_modules/.bin/node"
suite="$here/node_modules/@modelcontextprotocol/conformance/dist/index.js"

conformance_main() {
  if [ $# -lt 1 ] || [ -z "$1" ]; then
    echo "usage: $0 ${usage_target:-TARGET} [SCENARIO...]" >&2
    exit 2
  fi
  local target=$1
  shift
  if [ ! -x "$node" ] || [ ! -f "$suite" ]; then
    echo "FAIL setup: $node or $suite missing; run: (cd $here && npm ci)" >&2
    exit 2
  fi
  case "$("$node" --version 2>/dev/null)" in
    v22.*) ;;
    *) echo "FAIL setup: $node is not Node 22 ($("$node" --version 2>&1))" >&2; exit 2 ;;
  esac

  local scenarios
  if [ $# -gt 0 ]; then
    scenarios=("$@")
  else
    scenarios=("${defaults[@]}")
  fi
  local out=${CONFORMANCE_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/tasksim-${label// /-}.XXXXXX")}
  mkdir -p "$out"
  local limit=${CONFORMANCE_TIMEOUT:-120}

  local passed=0 failed=0 s dir rc checks line vrc
  for s in "${scenarios[@]}"; do
    dir="$out/$s"
    rm -rf "$dir"
    mkdir -p "$dir/results"
    # The suite writes checks.json under $dir/results/ and exits non-zero
    # on a FAILURE check (and, for clients, a WARNING, a timeout or a
    # client that exited non-zero).
    timeout --kill-after=10 "$limit" "$node" "$suite" "$kind" "${target_flag}" "$target" --scenario "$s" -o "$dir/results" \
      >"$dir/output.log" 2>&1 </dev/null
    rc=$?
    checks=$(find "$dir/results" -name checks.json -print 2>/dev/null | head -n 1)
    line=$("$node" "$verdict" "$s" "$(verdict_arg "$checks" "$dir")" "$rc" 2>&1)
    vrc=$?
    if [ $vrc -eq 0 ]; then
      passed=$((passed + 1))
    else
      failed=$((failed + 1))
      case "$line" in
        "FAIL $s:"*) ;;
        *) line="FAIL $s: verdict script error: $line" ;;
      esac
    fi
    echo "$line"
  done

  echo "results and logs: $out"
  echo "$label: $passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}
