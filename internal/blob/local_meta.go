package blob

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// meta is the JSON in an object's hidden metadata file. Size and ModTime describe the
// content file it was written with: the two files are renamed separately, so a crash (or a
// writer in another process) can pair content with another write's metadata, and a
// mismatch says not to trust it.
type meta struct {
	ContentType string `json:"content_type"`
	ETag        string `json:"etag"`
	Size        int64  `json:"size"`
	ModTime     int64  `json:"mod_time_ns"`
	// ChecksumSHA256 is the composite checksum of an object completed from parts with
	// SHA-256 digests; absent for everything else, so older metadata reads unchanged.
	ChecksumSHA256 string `json:"checksum_sha256,omitempty"`
}

// maxMetaLen bounds what readMeta loads; real metadata is a few hundred bytes.
const maxMetaLen = 64 << 10

func (m meta) object(key string) Object {
	return Object{Key: key, Size: m.Size, ContentType: m.ContentType, ETag: m.ETag, ChecksumSHA256: m.ChecksumSHA256}
}

// writeMetaTemp writes m to a new temporary file, fsynced, and returns its name.
func (l *Local) writeMetaTemp(n names, m meta) (string, error) {
	data, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	f, name, err := l.createTemp(n.tmpPrefix)
	if err != nil {
		return "", err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = l.root.Remove(name)
		return "", fmt.Errorf("blob: write metadata: %w", err)
	}
	return name, nil
}

// describes reports whether m was written with the content file fi.
func (m meta) describes(fi fs.FileInfo) bool {
	return m.Size == fi.Size() && m.ModTime == fi.ModTime().UnixNano()
}

// rebuildMeta derives metadata from the content alone (the default content type and a
// fresh hash). Missing, unreadable or stale metadata, which only a crash, a concurrent
// writer in another process or a file copied in by hand produces, gets this instead of
// making the object unreadable.
func rebuildMeta(f *os.File, fi fs.FileInfo) (meta, error) {
	h := md5.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, fi.Size())); err != nil {
		return meta{}, err
	}
	return meta{
		ContentType: DefaultContentType,
		ETag:        hex.EncodeToString(h.Sum(nil)),
		Size:        fi.Size(),
		ModTime:     fi.ModTime().UnixNano(),
	}, nil
}

// loadMeta reads and decodes the metadata file of n.
func (l *Local) loadMeta(n names) (meta, error) {
	f, err := l.root.Open(n.meta)
	if err != nil {
		return meta{}, err
	}
	defer f.Close()
	var m meta
	err = json.NewDecoder(io.LimitReader(f, maxMetaLen)).Decode(&m)
	return m, err
}
