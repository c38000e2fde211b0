package stripemock

import "syscall"

// procAttr kills stripe-mock with the test process, should that die before its cleanup.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
