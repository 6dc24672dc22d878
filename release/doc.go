// Package release holds no code: its test builds tasksim the way the
// release files at the repository's root do (.goreleaser.yaml, Dockerfile)
// and checks the binaries they make. Neither is published from here, and
// this machine has no Docker engine, so the Dockerfile's build stage runs
// outside Docker:
//
//	Dockerfile:  RUN CGO_ENABLED=0 go build -trimpath -ldflags "... -X .../internal/cli.Version=${VERSION}" -o /out/tasksim ./cmd/tasksim
//	        │        (run by the test with VERSION and /out replaced)
//	        ▼
//	tasksim --version  ──▶  "tasksim VERSION ..."
package release
