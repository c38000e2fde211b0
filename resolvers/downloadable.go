package resolvers

import (
	"context"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"till/storage"
)

// Portal downloads (upstream's customer-portal DownloadableService). A listed downloadable
// carries a Till link, <PortalURL>/downloads/<token>, rather than a storage URL: following it
// checks that the file is still granted, counts the download and only then redirects to a
// short-lived signed storage URL. The token is an HMAC-signed, expiring reference to the
// downloadable, so the link needs no session and cannot be forged or extended.

const (
	// downloadLinkTTL is how long a listed link works: a portal page stays usable for a
	// while, and a leaked link dies within the hour.
	downloadLinkTTL = time.Hour
	// downloadRedirectTTL is the life of the storage URL a link redirects to; the browser
	// follows it at once, so it only has to cover slow starts and retries.
	downloadRedirectTTL = 10 * time.Minute
	// downloadLinkLabel is the HKDF info of the link key: a key of its own, so no other
	// use of the server secret can mint download links.
	downloadLinkLabel = "till downloadable links"
	// downloadTokenVersion leads every token, so the format can change without old links
	// being misread.
	downloadTokenVersion = 1
	// downloadTokenLen is version, downloadable id, expiry (unix seconds) and HMAC-SHA256.
	downloadTokenLen = 1 + 16 + 8 + sha256.Size
)

// Why a download link is refused before the database is asked.
var (
	errDownloadLinkInvalid = errors.New("download link is invalid")
	errDownloadLinkExpired = errors.New("download link has expired")
)

// downloadKey derives the link key from the server secret.
func (r *Resolver) downloadKey() ([]byte, error) {
	return hkdf.Key(sha256.New, r.secret, nil, downloadLinkLabel, 32)
}

// downloadToken signs a reference to downloadable id that works until expires.
func downloadToken(key []byte, id uuid.UUID, expires time.Time) string {
	msg := make([]byte, 0, downloadTokenLen)
	msg = append(msg, downloadTokenVersion)
	msg = append(msg, id[:]...)
	msg = binary.BigEndian.AppendUint64(msg, uint64(expires.Unix()))
	mac := hmac.New(sha256.New, key)
	mac.Write(msg)
	return base64.RawURLEncoding.EncodeToString(mac.Sum(msg))
}

// parseDownloadToken checks a token's signature, then its expiry at now, and returns the
// downloadable it refers to. The signature is checked first so a forged token learns
// nothing about expiry.
func parseDownloadToken(key []byte, token string, now time.Time) (uuid.UUID, error) {
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(raw) != downloadTokenLen || raw[0] != downloadTokenVersion {
		return uuid.Nil, errDownloadLinkInvalid
	}
	msg, sum := raw[:downloadTokenLen-sha256.Size], raw[downloadTokenLen-sha256.Size:]
	mac := hmac.New(sha256.New, key)
	mac.Write(msg)
	if !hmac.Equal(sum, mac.Sum(nil)) {
		return uuid.Nil, errDownloadLinkInvalid
	}
	if now.Unix() >= int64(binary.BigEndian.Uint64(msg[17:])) {
		return uuid.Nil, errDownloadLinkExpired
	}
	return uuid.UUID(msg[1:17]), nil
}

// download follows a download link: it checks the token, counts the download and returns
// the storage URL to redirect to. Counting and signing share a transaction, so a download
// that cannot be signed is not counted. Errors: errDownloadLink*, storage.ErrNotFound (not
// granted any more), storage.ErrDownloadableGone (the file was withdrawn).
func (r *Resolver) download(ctx context.Context, token string) (string, error) {
	key, err := r.downloadKey()
	if err != nil {
		return "", err
	}
	id, err := parseDownloadToken(key, token, r.Now())
	if err != nil {
		return "", err
	}
	if r.blobs == nil {
		return "", errors.New("downloads need a blob store")
	}
	var url string
	err = storage.InTx(ctx, r.db, func(tx *sqlx.Tx) error {
		d, err := storage.CountDownload(ctx, tx, id, r.Now().UTC())
		if err != nil {
			return err
		}
		url, err = r.blobs.SignedURL(ctx, d.File.Path, downloadRedirectTTL, d.File.Name)
		return err
	})
	return url, err
}
