package blob

import (
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// bootID names the running kernel. Bytes written to a file without fsync survive the
// death of the process that wrote them (they are in the page cache) but not a crash or
// reboot of the machine, which changes the boot id; so a part recorded under this boot
// is intact until the boot id changes. Empty when the kernel does not say.
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// startWriteback asks the kernel to start writing the range to disk without waiting, so
// the fsync at completion finds little left to do. A failure only loses that head start.
func startWriteback(f *os.File, off, n int64) {
	_ = unix.SyncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE)
}

// openDirect opens name for writing with direct I/O, or returns nil where the filesystem
// refuses it (tmpfs, some network filesystems): the caller then writes through the page
// cache alone.
func openDirect(root *os.Root, name string) *os.File {
	f, err := root.OpenFile(name, os.O_WRONLY|unix.O_DIRECT, 0)
	if err != nil {
		return nil
	}
	return f
}
