// Package headless runs pages in headless Chromium for the tests that
// lay a page out in a browser (the demo report, the timeline): it finds
// the browser, runs a page with a probe script and returns what the
// probe wrote.
//
// Without chromium (the Debian package; .ci/run installs it, best
// effort) a browser test skips, except under CI=true, where a missing
// browser is a failure: a CI job that cannot run the browser checks must
// not pass as if it had.
//
//	page ──▶ + Probe script (writes JSON into <pre id="probe">) ──▶ chromium --dump-dom ──▶ JSON ──▶ test
//
// Example:
//
//	chromium := headless.Chromium(t)
//	var got struct{ Title string }
//	headless.Probe(t, chromium, "page.html", `{title: document.title}`, &got)
package headless
