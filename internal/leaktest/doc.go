// Package leaktest is the goroutine-leak check of the project's tests
// (go.uber.org/goleak, imported here only): a package's TestMain hands
// its tests to Main, which fails them if any goroutine outlives them,
//
//	func TestMain(m *testing.M) {
//		leaktest.H1FromEnv() // for packages whose clients use http.DefaultClient
//		leaktest.Main(m)
//	}
//
// and a test that must leave no goroutine of its own behind, in a package
// whose other tests may, calls Check first:
//
//	func TestRunLeavesNoGoroutines(t *testing.T) {
//		leaktest.Check(t)
//		...
//	}
//
// It is for tests only: no package outside a _test.go file imports it.
package leaktest
