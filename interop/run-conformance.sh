#!/usr/bin/env bash
# Run the MCP conformance suite (@modelcontextprotocol/conformance 0.1.16)
# server scenarios against a running server, one scenario at a time, with the
# Node 22 from interop/node_modules (the suite crashes on Node 20).
#
# Usage: interop/run-conformance.sh URL [SCENARIO...]
#   URL       e.g. http://127.0.0.1:8080/mcp (must be a localhost URL for
#             dns-rebinding-protection)
#   SCENARIO  default: the 9 scenarios below
#
# Prints "PASS name" or "FAIL name: reason" per scenario, then
# "conformance: N passed, M failed"; exits 1 if any scenario failed, 2 on a
# setup error. A scenario passes only if the suite exits 0, its checks.json
# has no FAILURE, no WARNING (unless CONFORMANCE_ALLOW_WARNINGS=1), at least
# one SUCCESS, and the fixture texts/values checked by conformance-verdict.mjs
# are right.
#
# Environment:
#   CONFORMANCE_OUT              keep results/logs here (default: a temp dir)
#   CONFORMANCE_TIMEOUT          seconds per scenario (default 120)
#   CONFORMANCE_ALLOW_WARNINGS=1 do not fail on WARNING checks
#
# Setup: (cd interop && npm ci)
set -u

here=$(cd "$(dirname "$0")" && pwd)
node="$here/node_modules/.bin/node"
suite="$here/node_modules/@modelcontextprotocol/conformance/dist/index.js"
verdict="$here/conformance-verdict.mjs"

if [ $# -lt 1 ] || [ -z "$1" ]; then
  echo "usage: $0 URL [SCENARIO...]" >&2
  exit 2
fi
url=$1
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
  scenarios=(
    server-initialize
    ping
    tools-list
    tools-call-simple-text
    tools-call-error
    tools-call-with-progress
    server-sse-polling
    server-sse-multiple-streams
    dns-rebinding-protection
  )
fi

out=${CONFORMANCE_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/tasksim-conformance.XXXXXX")}
mkdir -p "$out"
limit=${CONFORMANCE_TIMEOUT:-120}

passed=0
failed=0
for s in "${scenarios[@]}"; do
  dir="$out/$s"
  rm -rf "$dir"
  mkdir -p "$dir/results"
  # The suite writes $dir/results/server-<scenario>-<timestamp>/checks.json
  # and exits 1 iff some check has status FAILURE.
  timeout --kill-after=10 "$limit" "$node" "$suite" server --url "$url" --scenario "$s" -o "$dir/results" \
    >"$dir/output.log" 2>&1 </dev/null
  rc=$?
  checks=$(find "$dir/results" -name checks.json -print 2>/dev/null | head -n 1)
  line=$("$node" "$verdict" "$s" "${checks:-$dir/results/missing-checks.json}" "$rc" 2>&1)
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
echo "conformance: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
