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

. "$(dirname "$0")/conformance-lib.sh"
kind=client
target_flag=--command
usage_target=CMD
label="conformance client"
verdict="$here/conformance-client-verdict.mjs"
defaults=(initialize tools_call sse-retry)
# The suite writes DIR/results/<scenario>-<timestamp>/{checks.json,
# stdout.txt,stderr.txt}; the verdict script reads that directory.
verdict_arg() { dirname "${1:-$2/results/missing/checks.json}"; }

conformance_main "$@"
