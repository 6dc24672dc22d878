// Package child runs the programs tasksim starts on a user's behalf (a
// stdio server under test, a client under test) so that nothing they
// start outlives them, and keeps what tasksim needs of what they print.
//
// A command made by Command (or set up with Isolate) runs in a process
// group of its own; its context ending terminates the whole group, and
// End, called once the command was waited for, ends whatever the command
// left behind in it:
//
//	tasksim ─ exec ─▶ CMD (group leader, pgid = its pid)
//	                    └─ sh ─ sleep 1000 &   (same group)
//	ctx done:  SIGTERM ─▶ group;  WaitDelay later exec kills CMD
//	End:       SIGTERM ─▶ group;  grace later SIGKILL ─▶ group
//
// Tail keeps the last line a child wrote to stderr, for error messages;
// Capped keeps the first bytes of its stdout, up to a limit, and fails the
// writes past it (the child then sees a closed pipe).
//
//	cmd := child.Command(ctx, time.Second, "client", url)
//	out := child.NewCapped(1 << 20)
//	cmd.Stdout = out
//	tail := &child.Tail{W: os.Stderr}
//	cmd.Stderr = tail
//	err := cmd.Run()
//	child.End(cmd, time.Second)
//
// Process groups are a Unix facility; elsewhere a command's context
// ending kills the command alone and End does nothing.
package child
