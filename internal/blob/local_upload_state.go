package blob

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
)

// uploadsDir holds Local's unfinished multipart uploads, one directory per upload id. Keys
// never have dot-leading segments, so no object, and no signed download URL, can reach it.
const uploadsDir = ".uploads"

// uploadSpec is an upload's spec.json: what CreateMultipart was asked for. It never
// changes after creation, so readers need no lock to trust it.
type uploadSpec struct {
	Key         string     `json:"key"`
	ContentType string     `json:"content_type"`
	Size        int64      `json:"size"`
	Parts       []specPart `json:"parts"`
}

type specPart struct {
	Number int    `json:"number"`
	Start  int64  `json:"start"`
	End    int64  `json:"end"`
	SHA256 string `json:"sha256,omitempty"`
}

// partRecord is what a successful part PUT leaves behind: the range it wrote and the
// digest of the bytes, so completion can check the client's list without rereading data.
type partRecord struct {
	Number int    `json:"number"`
	Start  int64  `json:"start"`
	End    int64  `json:"end"`
	SHA256 string `json:"sha256"`
	ETag   string `json:"etag"`
	// Boot is the boot id the part was received under, when its bytes were left to the
	// page cache rather than fsynced; empty for a fsynced part.
	Boot string `json:"boot,omitempty"`
}

// uploadNames are the root-relative files of one upload: spec.json, the data file that
// parts are written into at their offsets and that becomes the object, and one record
// per uploaded part.
type uploadNames struct{ dir, spec, data string }

func uploadNamesOf(id string) uploadNames {
	dir := filepath.Join(uploadsDir, id)
	return uploadNames{dir: dir, spec: filepath.Join(dir, "spec.json"), data: filepath.Join(dir, "data")}
}

func (u uploadNames) part(n int) string {
	return filepath.Join(u.dir, "part-"+strconv.Itoa(n)+".json")
}

// validUploadID accepts only ids CreateMultipart can have made (32 lowercase hex digits),
// so an id from a caller can never name a path outside its upload directory.
func validUploadID(id string) bool {
	if len(id) != 32 {
		return false
	}
	for _, c := range []byte(id) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func uploadNotFound(id string) error {
	return fmt.Errorf("blob: upload %q: %w", id, ErrUploadNotFound)
}

// writeFileAtomic writes data to a hidden temporary file in dir and renames it to name,
// so readers see the old file or the new one, never a torn one.
func (l *Local) writeFileAtomic(dir, name string, data []byte, sync bool) error {
	f, tmp, err := l.createTemp(filepath.Join(dir, ".tmp-"))
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = l.root.Rename(tmp, name)
	}
	if err != nil {
		_ = l.root.Remove(tmp)
	}
	return err
}

func (l *Local) loadSpec(u uploadNames) (uploadSpec, error) {
	data, err := l.root.ReadFile(u.spec)
	if err != nil {
		return uploadSpec{}, err
	}
	var s uploadSpec
	if err := json.Unmarshal(data, &s); err != nil {
		return uploadSpec{}, fmt.Errorf("read upload spec: %w", err)
	}
	return s, nil
}

func (l *Local) loadRecord(u uploadNames, n int) (partRecord, error) {
	data, err := l.root.ReadFile(u.part(n))
	if err != nil {
		return partRecord{}, err
	}
	var rec partRecord
	err = json.Unmarshal(data, &rec)
	return rec, err
}

// uploadLocks coordinate part PUTs, completion and abort of uploads in this process: an
// RWMutex per upload (PUTs share it, completion and abort hold it alone) and a mutex per
// part. Entries exist only while held or awaited, so memory follows activity.
type uploadLocks struct {
	mu sync.Mutex
	m  map[string]*refLock
}

type refLock struct {
	sync.RWMutex
	refs int
}

func (u *uploadLocks) acquire(name string) *refLock {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.m == nil {
		u.m = map[string]*refLock{}
	}
	l := u.m[name]
	if l == nil {
		l = &refLock{}
		u.m[name] = l
	}
	l.refs++
	return l
}

func (u *uploadLocks) release(name string, l *refLock) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if l.refs--; l.refs == 0 {
		delete(u.m, name)
	}
}

func (u *uploadLocks) lock(id string) func() {
	l := u.acquire(id)
	l.Lock()
	return func() { l.Unlock(); u.release(id, l) }
}

func (u *uploadLocks) rlock(id string) func() {
	l := u.acquire(id)
	l.RLock()
	return func() { l.RUnlock(); u.release(id, l) }
}

func (u *uploadLocks) tryLock(id string) (func(), bool) {
	l := u.acquire(id)
	if !l.TryLock() {
		u.release(id, l)
		return nil, false
	}
	return func() { l.Unlock(); u.release(id, l) }, true
}

// lockPart names parts with a "/", which upload ids never contain.
func (u *uploadLocks) lockPart(id string, n int) func() {
	return u.lock(id + "/" + strconv.Itoa(n))
}
