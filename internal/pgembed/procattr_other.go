//go:build unix && !linux

package pgembed

import "syscall"

// sysProcAttr is how server processes are started: in their own process group, so a Ctrl-C at
// the terminal reaches only the caller, and as the unprivileged account when the caller is
// root. This platform has no parent-death signal, so a killed caller can leave the server
// running; its next Start will report ErrAlreadyRunning.
func sysProcAttr(acct account) *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Setpgid: true}
	if acct.drop {
		attr.Credential = &syscall.Credential{Uid: uint32(acct.uid), Gid: uint32(acct.gid)}
	}
	return attr
}
