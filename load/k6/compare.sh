#!/usr/bin/env bash
# Back-to-back comparison of the polling load generator's CPU per task:
# tasksim load and k6 (v1.8.1, installed with go install) run one after the
# other against the same reference server, on the same workload (poll
# every 200 ms, tasks of 1-3 s, 100 tasks/s, 20 s; poll.js is the k6 side).
# The server runs in its own process, so each generator's CPU (user +
# system, from the shell's `times`) is its own.
#
#	load/k6/compare.sh            # from the repository root
#	RATE=50 DURATION=30s load/k6/compare.sh
#	SKIP_K6=1 load/k6/compare.sh  # tasksim's side alone, without k6
#
# Needs Go, bash and python3 (to read the JSON summaries). A busy machine
# distorts both sides alike only roughly: run it on a quiet one, and more
# than once.
set -euo pipefail

RATE=${RATE:-100}
DURATION=${DURATION:-20s}
POLL_MS=${POLL_MS:-200}
ADDR=${ADDR:-127.0.0.1:17070}
K6_VERSION=v1.8.1

root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'kill "${server:-}" 2>/dev/null || true; rm -rf "$work"' EXIT

echo "building tasksim" >&2
(cd "$root" && go build -o "$work/tasksim" ./cmd/tasksim)
k6=$(command -v k6 || true)
if [ -n "${SKIP_K6:-}" ]; then
	:
elif [ -z "$k6" ] || ! "$k6" version 2>/dev/null | grep -q "$K6_VERSION"; then
	echo "installing k6 $K6_VERSION (go install go.k6.io/k6@$K6_VERSION)" >&2
	GOBIN="$work" go install "go.k6.io/k6@$K6_VERSION"
	k6="$work/k6"
fi

"$work/tasksim" serve --addr "$ADDR" 2>"$work/server.log" &
server=$!
url="http://$ADDR/mcp"
for _ in $(seq 50); do
	if (exec 3<>"/dev/tcp/${ADDR%:*}/${ADDR#*:}") 2>/dev/null; then break; fi
	sleep 0.1
done

# cpu_of CMD...: runs CMD in a subshell and prints the CPU seconds (user +
# system) it and its children used, from bash's `times`.
cpu_of() {
	(
		"$@" >"$work/out.txt" 2>"$work/err.txt" || true
		times
	) | tail -1 | python3 -c '
import re, sys
user, sys_ = re.findall(r"(\d+)m([\d.]+)s", sys.stdin.read())
print(sum(int(m) * 60 + float(s) for m, s in (user, sys_)))'
}

echo "tasksim load: poll:${POLL_MS}ms, 1-3 s tasks, $RATE/s for $DURATION" >&2
ts_cpu=$(cpu_of "$work/tasksim" load --server "$url" --mode "poll:${POLL_MS}ms" --task-duration 1s..3s \
	--rate "$RATE" --duration "$DURATION" --sessions 8 --json "$work/tasksim.json")
ts_tasks=$(python3 -c 'import json,sys; print(sum(m["completed"] for m in json.load(open(sys.argv[1]))["modes"]))' "$work/tasksim.json")

if [ -n "${SKIP_K6:-}" ]; then
	python3 -c 'import sys; c, n = float(sys.argv[1]), int(sys.argv[2]); print(f"tasksim: {c:.2f} s CPU for {n} tasks: {c / n * 1000:.3f} ms/task")' "$ts_cpu" "$ts_tasks"
	exit 0
fi
echo "k6 $K6_VERSION: the same workload (load/k6/poll.js)" >&2
k6_cpu=$(cpu_of env URL="$url" RATE="$RATE" DURATION="$DURATION" POLL_MS="$POLL_MS" \
	"$k6" run --quiet --summary-export "$work/k6.json" "$root/load/k6/poll.js")
k6_tasks=$(python3 -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["metrics"].get("tasks_completed", {}).get("count", 0)))' "$work/k6.json")

python3 - "$ts_cpu" "$ts_tasks" "$k6_cpu" "$k6_tasks" <<'PY'
import sys
ts_cpu, ts_tasks, k6_cpu, k6_tasks = float(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
def per(cpu, n):
    return cpu / n * 1000 if n else float("nan")
a, b = per(ts_cpu, ts_tasks), per(k6_cpu, k6_tasks)
print(f"tasksim: {ts_cpu:.2f} s CPU for {ts_tasks} tasks: {a:.3f} ms/task")
print(f"k6:      {k6_cpu:.2f} s CPU for {k6_tasks} tasks: {b:.3f} ms/task")
print(f"tasksim / k6 CPU per task: {a / b:.2f}")
PY
