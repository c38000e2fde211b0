//go:build !linux

package blob

import "os"

// bootID is empty where the kernel has no boot id: every part is then fsynced before it
// is recorded.
func bootID() string { return "" }

func startWriteback(*os.File, int64, int64) {}

// openDirect is nil: direct I/O is used on Linux only.
func openDirect(*os.Root, string) *os.File { return nil }
