package blob

import (
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"time"
)

// CreateMultipart makes the upload's directory with a data file of the final size, so
// parts can be written straight to their offsets, and spec.json last: an upload exists
// once its spec does.
func (l *Local) CreateMultipart(ctx context.Context, key string, spec UploadSpec) (string, error) {
	if err := begin(ctx, key); err != nil {
		return "", err
	}
	if err := ValidateParts(spec.Size, spec.Parts, 0); err != nil {
		return "", err
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	u := uploadNamesOf(id)
	if err := l.createUpload(u, key, spec); err != nil {
		_ = l.root.RemoveAll(u.dir)
		return "", fmt.Errorf("blob: %q: create upload: %w", key, err)
	}
	return id, nil
}

func (l *Local) createUpload(u uploadNames, key string, spec UploadSpec) error {
	if err := l.root.MkdirAll(u.dir, 0o750); err != nil {
		return err
	}
	f, err := l.root.OpenFile(u.data, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o640)
	if err != nil {
		return err
	}
	err = f.Truncate(spec.Size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	s := uploadSpec{Key: key, ContentType: contentTypeOrDefault(spec.ContentType), Size: spec.Size}
	for _, p := range spec.Parts {
		s.Parts = append(s.Parts, specPart{Number: p.Number, Start: p.Start, End: p.End, SHA256: p.SHA256Base64})
	}
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return l.writeFileAtomic(u.dir, u.spec, data, true)
}

// CompleteMultipart checks parts against the spec and the parts' records, then makes the
// data file the object the way Put does (fsync, metadata, rename, directory fsync). The
// upload's exclusive lock waits for part PUTs in flight, so none writes into the file
// after it has become the object.
func (l *Local) CompleteMultipart(ctx context.Context, key, uploadID string, parts []CompletedPart) (Object, error) {
	if err := begin(ctx, key); err != nil {
		return Object{}, err
	}
	if !validUploadID(uploadID) {
		return Object{}, uploadNotFound(uploadID)
	}
	defer l.uploads.lock(uploadID)()
	u := uploadNamesOf(uploadID)
	spec, err := l.loadSpec(u)
	switch {
	case isMissing(err):
		return Object{}, uploadNotFound(uploadID)
	case err != nil:
		return Object{}, fmt.Errorf("blob: upload %q: %w", uploadID, err)
	case spec.Key != key:
		return Object{}, uploadNotFound(uploadID)
	}
	recs, err := l.checkCompletion(u, spec, parts)
	if err != nil {
		return Object{}, err
	}
	m := meta{ContentType: spec.ContentType, ETag: multipartETag(recs)}
	if spec.Parts[0].SHA256 != "" {
		sum, err := CompositeSHA256(parts)
		if err != nil {
			return Object{}, err
		}
		m.ChecksumSHA256 = sum + "-" + strconv.Itoa(len(parts))
	}
	obj, err := l.commitUpload(key, u, spec.Size, m)
	if err != nil {
		return Object{}, err
	}
	_ = l.root.RemoveAll(u.dir)
	return obj, nil
}

// checkCompletion returns the records of parts when they are exactly the upload's parts,
// ascending, each once, as uploaded; else a *PartError naming the first problem.
func (l *Local) checkCompletion(u uploadNames, spec uploadSpec, parts []CompletedPart) ([]partRecord, error) {
	if err := checkPartList(parts); err != nil {
		return nil, err
	}
	recs := make([]partRecord, 0, len(parts))
	for _, p := range parts {
		if p.Number > len(spec.Parts) {
			return nil, &PartError{p.Number, "not uploaded"} // as S3 says, which cannot know better
		}
		sp := spec.Parts[p.Number-1]
		rec, err := l.loadRecord(u, p.Number)
		switch {
		case isMissing(err):
			return nil, &PartError{p.Number, "not uploaded"}
		case err != nil:
			return nil, fmt.Errorf("blob: read part %d: %w", p.Number, err)
		case rec.Boot != "" && rec.Boot != l.boot:
			return nil, &PartError{p.Number, "not uploaded: received before the server's machine restarted, upload it again"}
		case rec.Start != sp.Start || rec.End != sp.End:
			return nil, &PartError{p.Number, "uploaded with another byte range"}
		case NormalizeETag(p.ETag) != rec.ETag:
			return nil, &PartError{p.Number, "ETag does not match"}
		case sp.SHA256 != "" && !sameSHA256(p.SHA256Base64, sp.SHA256),
			p.SHA256Base64 != "" && !sameSHA256(p.SHA256Base64, rec.SHA256):
			return nil, &PartError{p.Number, "SHA-256 does not match"}
		}
		recs = append(recs, rec)
	}
	if len(parts) < len(spec.Parts) {
		return nil, &PartError{len(parts) + 1, "missing"}
	}
	return recs, nil
}

// sameSHA256 compares two base64 digests by value, so padding or encoding variants of the
// same digest match and a malformed one matches nothing.
func sameSHA256(a, b string) bool {
	da, err := DecodeSHA256(a)
	if err != nil {
		return false
	}
	db, err := DecodeSHA256(b)
	return err == nil && string(da) == string(db)
}

// multipartETag is S3's ETag of a multipart object: the MD5 of the parts' binary ETags,
// then "-" and the number of parts.
func multipartETag(recs []partRecord) string {
	h := md5.New()
	for _, r := range recs {
		b, _ := hex.DecodeString(r.ETag)
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)) + "-" + strconv.Itoa(len(recs))
}

// commitUpload makes the upload's data file the object under key, with m completed from
// the file. Until the final rename the upload is intact, so a failure here (say, key names
// an existing directory) leaves it ready for another CompleteMultipart.
func (l *Local) commitUpload(key string, u uploadNames, size int64, m meta) (Object, error) {
	n := namesOf(key)
	if err := l.root.MkdirAll(n.dir, 0o750); err != nil {
		return Object{}, l.writeErr(key, err)
	}
	fi, err := l.syncData(u, size)
	if err != nil {
		return Object{}, fmt.Errorf("blob: %q: %w", key, err)
	}
	m.Size, m.ModTime = fi.Size(), fi.ModTime().UnixNano()
	metaTmp, err := l.writeMetaTemp(n, m)
	if err != nil {
		return Object{}, err
	}
	unlock := l.lock(key)
	if err := l.root.Rename(u.data, n.obj); err != nil {
		unlock()
		_ = l.root.Remove(metaTmp)
		return Object{}, l.writeErr(key, err)
	}
	err = l.root.Rename(metaTmp, n.meta)
	unlock()
	if err != nil {
		_ = l.root.Remove(metaTmp)
		return Object{}, fmt.Errorf("blob: %q: store metadata: %w", key, err)
	}
	l.syncDir(n.dir)
	obj := m.object(key)
	obj.LastModified = fi.ModTime()
	return obj, nil
}

// syncData makes the data file exactly size bytes, stamps it with the completion time (the
// object's LastModified, as S3 reports) and flushes it to disk.
func (l *Local) syncData(u uploadNames, size int64) (fs.FileInfo, error) {
	f, err := l.root.OpenFile(u.data, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err == nil && fi.Size() != size {
		err = f.Truncate(size)
	}
	if err == nil {
		now := time.Now()
		err = l.root.Chtimes(u.data, now, now)
	}
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		fi, err = f.Stat()
	}
	return fi, err
}

// AbortMultipart removes the upload's directory. Part PUTs in flight finish first; later
// ones find no upload.
func (l *Local) AbortMultipart(ctx context.Context, key, uploadID string) error {
	if err := begin(ctx, key); err != nil {
		return err
	}
	if !validUploadID(uploadID) {
		return nil
	}
	defer l.uploads.lock(uploadID)()
	u := uploadNamesOf(uploadID)
	spec, err := l.loadSpec(u)
	if err == nil && spec.Key != key {
		return nil // another key's upload: not the caller's to abort
	}
	if err := l.root.RemoveAll(u.dir); err != nil {
		return fmt.Errorf("blob: abort upload %q: %w", uploadID, err)
	}
	return nil
}

// SweepUploads removes uploads started more than olderThan ago (by their spec.json's
// modification time, or the directory's when a crash left no spec) and returns how many.
// Uploads with a part PUT or completion in progress are left for the next sweep.
func (l *Local) SweepUploads(ctx context.Context, olderThan time.Duration) (int, error) {
	entries, err := fs.ReadDir(l.root.FS(), uploadsDir)
	if isMissing(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("blob: sweep uploads: %w", err)
	}
	cutoff := time.Now().Add(-olderThan)
	removed := 0
	var errs []error
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return removed, err
		}
		id := e.Name()
		if !e.IsDir() || !validUploadID(id) {
			continue
		}
		u := uploadNamesOf(id)
		fi, err := l.root.Stat(u.spec)
		if isMissing(err) {
			fi, err = l.root.Stat(u.dir)
		}
		if err != nil || fi.ModTime().After(cutoff) {
			continue
		}
		unlock, ok := l.uploads.tryLock(id)
		if !ok {
			continue
		}
		if err := l.root.RemoveAll(u.dir); err != nil {
			errs = append(errs, err)
		} else {
			removed++
		}
		unlock()
	}
	if err := errors.Join(errs...); err != nil {
		return removed, fmt.Errorf("blob: sweep uploads: %w", err)
	}
	return removed, nil
}
