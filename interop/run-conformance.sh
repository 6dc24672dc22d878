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

. "$(dirname "$0")/conformance-lib.sh"
kind=server
target_flag=--url
usage_target=URL
label=conformance
verdict="$here/conformance-verdict.mjs"
defaults=(
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
# The suite writes DIR/results/server-<scenario>-<timestamp>/checks.json;
# the verdict script reads that file.
verdict_arg() { echo "${1:-$2/results/missing-checks.json}"; }

conformance_main "$@"
