//go:build !linux

package stripemock

import "syscall"

// procAttr has no parent-death signal to ask for outside Linux.
func procAttr() *syscall.SysProcAttr { return nil }
