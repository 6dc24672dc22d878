// Package cli is the tasksim command line: the one place where the
// packages meet (mcp, traces, recorder, faults, load, sim, check) and are
// wired to flags, files and exit codes. cmd/tasksim only calls OSState
// and Main and exits with Main's code, so every command runs in-process
// under test.
//
//	cmd/tasksim ─ Main(st) ─ NewCmdRoot(st) ─┬─ NewCmdServe(st, runF) ─ runServe(ctx, st, o)
//	                │                         ├─ NewCmdTrace(st) ─ show, stats, verify, check, ...
//	                │                         └─ ...
//	                └─ ExitCode(err): 0 ok, 1 findings, 2 usage, 3 runtime, 130 interrupted
//
// # State
//
// All process state enters through one *State (state.go): stdin, stdout,
// stderr, the arguments, the environment, whether stdout is a terminal,
// the Context that SIGINT and SIGTERM end, and the clock of the
// reference client. OSState makes the real process's; a test builds its
// own and calls Main.
//
// # How a subcommand is built
//
// Each subcommand is an options struct of its flags (XOptions, a field
// per flag), a NewCmdX(st) that builds the cobra command and binds the
// flags to it, and a runX(ctx, st, o, ...) that does the work; serve and
// call take a runF so that a test can see the options a command line
// makes. runX checks the flags first (a usage error before anything
// starts), then builds the configuration of the package it drives, runs
// it, and reports. Long run functions are cut into those steps as named
// helpers (for example loadConfig, createLoadOutputs, reportLoad and
// judgeLoad for tasksim load). A parent command (trace, report) has no
// work of its own: needSubcommand makes a bare call a usage error that
// names its subcommands.
//
// # Exit codes
//
// A run function returns an error and never exits. exit.go maps errors
// to exit codes, the only place that does: a *UsageError (usagef) is a
// usage error or bad input (2), a *FindingsError a rule violated or a
// threshold missed (1), an *InterruptedError a measurement cut short by a
// signal (130), an *ExitStatusError a child's own code, and any other
// error a runtime failure (3). docs/cli.md documents them.
//
// # Output
//
// Results go to st.Stdout, diagnostics and progress to st.Stderr. A file
// a command writes (-o, --json, --junit, --html, --hlog) is an outFile
// (output.go): written beside its path and renamed over it only when the
// command succeeds, so a failed run leaves the path as it found it; "-"
// is stdout. JSON goes through writeJSON; JUnit reports through the one
// writer in package check.
//
// # Files
//
// One file per subcommand, named after it: serve.go, call.go, record.go,
// proxy.go, replay.go, check.go (its reports in check_report.go), sim.go
// (sim_plan.go, sim_tally.go, sim_outputs.go), load.go (load_run.go,
// load_targets.go, load_progress.go, load_tool.go, load_profile.go),
// demo.go (demo_faults.go), trace.go and trace_SUB.go for each trace
// subcommand, report.go and report_SUB.go for each report subcommand.
// Shared by several commands: root.go (Main, the command tree),
// state.go, exit.go, output.go (output files), subcommands.go, validate.go
// (every numeric flag's range), bind.go (listen addresses), headers.go
// (--header, --bearer-token-env), redactflags.go and redacturl.go
// (secrets), shellwords.go (--server-cmd), bug.go (--bug), timeline.go
// (--html timelines), failures.go, completion.go and version.go.
package cli
