package pgembed

import "syscall"

// sysProcAttr is how server processes are started: in their own process group, so a Ctrl-C at
// the terminal reaches only the caller, which then shuts the server down in its own order; as
// the unprivileged account when the caller is root; and with a parent-death signal, so a
// caller that is killed outright never leaks a running server.
func sysProcAttr(acct account) *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if acct.drop {
		attr.Credential = &syscall.Credential{Uid: uint32(acct.uid), Gid: uint32(acct.gid)}
	}
	return attr
}
