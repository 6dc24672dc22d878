#!/usr/bin/env bash
# Run the MCP conformance suite (@modelcontextprotocol/conformance 0.1.16)
# CLIENT scenarios against a client command, one scenario at a time, with
# the Node 22 from interop/node_modules (the suite crashes on Node 20).
#
# Usage: interop/run-conformance-client.sh CMD [SCENARIO...]
#   CMD       the client, e.g. the built interop/conformanceclient binary:
#               go build -o /tmp/cc ./interop/conformanceclient
#               interop/run-conformance-client.sh /tmp/cc
#             The suite splits CMD on spaces (no quoting), appends the test
#             server's URL as the last argument and sets
#             MCP_CONFORMANCE_SCENARIO to the scenario's name.
#   SCENARIO  default: initialize tools_call sse-retry
#
# Prints "PASS name" or "FAIL name: reason" per scenario, then
# "conformance client: N passed, M failed"; exits 1 if any scenario failed,
# 2 on a setup error. A scenario passes only if conformance-client-verdict.mjs
# accepts it: no FAILURE, no WARNING (unless CONFORMANCE_ALLOW_WARNINGS=1), at
# least one SUCCESS, the key checks SUCCESS, their values right, and the
# client's report line saying ok (CONFORMANCE_CLIENT_NO_REPORT=1 for a client
# that prints none).
#
# Environment:
#   CONFORMANCE_OUT              keep results/logs here (default: a temp dir)
#   CONFORMANCE_TIMEOUT          seconds per scenario (default 120)
#   CONFORMANCE_ALLOW_WARNINGS=1 do not fail on WARNING checks
#   CONFORMANCE_CLIENT_NO_REPORT=1 judge by the suite's checks only
#
# Setup: (cd interop && npm ci)
set -u

here=$(cd "$(dirname "$0")" && pwd)
node="$here/node_modules/.bin/node"
suite="$here/node_modules/@modelcontextprotocol/conformance/dist/index.js"
verdict="$here/conformance-client-verdict.mjs"

if [ $# -lt 1 ] || [ -z "$1" ]; then
  echo "usage: $0 CMD [SCENARIO...]" >&2
  exit 2
fi
cmd=$1
shift

if [ ! -x "$node" ] || [ ! -f "$suite" ]; then
  echo "FAIL setup: $node or $suite missing; run: (cd $here && npm ci)" >&2
  exit 2
fi
case "$("$node" --version 2>/dev/null)" in
  v22.*) ;;
  *) echo "FAIL setup: $node is not Node 22 ($("$node" --version 2>&1))" >&2; exit 2 ;;
esac

if [ $# -gt 0 ]; then
  scenarios=("$@")
else
  scenarios=(initialize tools_call sse-retry)
fi

out=${CONFORMANCE_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/tasksim-conformance-client.XXXXXX")}
mkdir -p "$out"
limit=${CONFORMANCE_TIMEOUT:-120}

passed=0
failed=0
for s in "${scenarios[@]}"; do
  dir="$out/$s"
  rm -rf "$dir"
  mkdir -p "$dir/results"
  # The suite writes $dir/results/<scenario>-<timestamp>/{checks.json,stdout.txt,stderr.txt}
  # and exits 1 on a FAILURE or WARNING check, a timeout, or a client that
  # exited non-zero.
  timeout --kill-after=10 "$limit" "$node" "$suite" client --command "$cmd" --scenario "$s" -o "$dir/results" \
    >"$dir/output.log" 2>&1 </dev/null
  rc=$?
  checks=$(find "$dir/results" -name checks.json -print 2>/dev/null | head -n 1)
  resdir=$(dirname "${checks:-$dir/results/missing/checks.json}")
  line=$("$node" "$verdict" "$s" "$resdir" "$rc" 2>&1)
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
echo "conformance client: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
