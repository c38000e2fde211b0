package testtool

import "syscall"

// serverProcAttr has the kernel kill the server if the test binary dies without stopping
// it, for example at a test timeout.
func serverProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
