package storagetest

import "flag"

// WholeSuite reports whether every test of the binary ran: a -run, -skip or -list filter
// leaves tests out on purpose. Coverage gates that a package's TestMain checks after Main
// (every /v1 route reached, every id-taking root field tried across tenants) judge only
// whole runs.
func WholeSuite() bool {
	for _, name := range []string{"test.run", "test.skip", "test.list"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" {
			return false
		}
	}
	return true
}
