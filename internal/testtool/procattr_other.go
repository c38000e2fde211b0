//go:build !linux

package testtool

import "syscall"

// serverProcAttr adds nothing where the kernel cannot tie the server's life to the test's.
func serverProcAttr() *syscall.SysProcAttr { return nil }
