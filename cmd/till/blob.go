package main

import (
	"crypto/hkdf"
	"crypto/sha256"
	"errors"
	"net/http"
	"path/filepath"

	"till/internal/blob"
)

// blobURLPath is where Till serves the signed links of the local blob store.
const blobURLPath = "/blob/"

// openBlobStore opens the configured object store: an S3-compatible bucket when
// TILL_S3_BUCKET is set, otherwise a directory (TILL_BLOB_DIR, by default under the data
// directory) whose signed links Till serves itself; the handler is nil for S3, whose links
// point at the bucket. Local links are signed with a key derived from the server secret, so
// they survive restarts and no other use of the secret can forge them.
// errNoSharedBlobs refuses to start with DATABASE_URL and no storage named for documents: the
// default directory lives under each process's own data directory, so a receipt stored by
// one process would answer 404 from another. The embedded cluster keeps every process on one
// data directory, where the default is shared.
var errNoSharedBlobs = errors.New("configuration: with DATABASE_URL, stored files and documents (receipts, invoices) " +
	"must live where every till process sees them: set TILL_S3_BUCKET (with TILL_S3_ENDPOINT), or TILL_BLOB_DIR to a " +
	"directory that all processes share; a single process may name its own, such as $TILL_DATA_DIR/blobs")

func openBlobStore(cfg config, secret []byte) (blob.Store, http.Handler, error) {
	if cfg.S3Bucket != "" {
		if cfg.S3Endpoint == "" {
			return nil, nil, errors.New("configuration: TILL_S3_BUCKET needs TILL_S3_ENDPOINT")
		}
		s, err := blob.NewS3(blob.S3Config{Endpoint: cfg.S3Endpoint, Region: cfg.S3Region, Bucket: cfg.S3Bucket,
			AccessKey: cfg.S3AccessKey, SecretKey: cfg.S3SecretKey, UseSSL: cfg.S3UseSSL, PathStyle: cfg.S3PathStyle})
		return s, nil, err
	}
	key, err := hkdf.Key(sha256.New, secret, nil, "till blob links", 32)
	if err != nil {
		return nil, nil, err
	}
	dir := cfg.BlobDir
	if dir == "" {
		if cfg.DatabaseURL != "" {
			return nil, nil, errNoSharedBlobs
		}
		dir = filepath.Join(cfg.DataDir, "blobs")
	}
	l, err := blob.NewLocal(blob.LocalConfig{Dir: dir, BaseURL: cfg.PublicURL + blobURLPath, Secret: key,
		TransferTime: cfg.transferTime})
	if err != nil {
		return nil, nil, err
	}
	return l, l.Handler(), nil
}
