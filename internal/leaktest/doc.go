// Package leaktest is the goroutine-leak check of the project's tests:
// a package's TestMain hands its tests to Main, which fails them if any
// goroutine outlives them (go.uber.org/goleak).
//
//	func TestMain(m *testing.M) {
//		leaktest.H1FromEnv() // for packages whose clients use http.DefaultClient
//		leaktest.Main(m)
//	}
//
// It is for tests only: no package outside a _test.go file imports it.
package leaktest
