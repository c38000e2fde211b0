package blob_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"till/internal/blob"
	"till/internal/testtool"
)

// The real S3 server the versitygw rows run against: its posix backend on a temporary
// directory, built from source with the go command running the tests.
const (
	versitygwPackage = "github.com/versity/versitygw/cmd/versitygw"
	versitygwVersion = "v1.8.0"
	versitygwAccess  = "test-access"
	versitygwSecret  = "test-secret"
	versitygwBucket  = "till"
)

// versitygwBinary returns the server's binary, built on the machine's first use.
func versitygwBinary(t testing.TB) string {
	t.Helper()
	start := time.Now()
	bin, err := testtool.Install(versitygwPackage, versitygwVersion)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Logf("built versitygw %s in %s into %s", versitygwVersion, d.Round(time.Second), filepath.Dir(bin))
	}
	return bin
}

// newVersitygw starts versitygw on a loopback port, over TLS with a certificate made for the
// test or over plain HTTP, creates the bucket and points an S3 store at it. The server stops
// when the test ends.
func newVersitygw(t *testing.T, bin string, useTLS bool) (*blob.S3, *http.Client) {
	t.Helper()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"--access", versitygwAccess, "--secret", versitygwSecret, "--quiet"}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if useTLS {
		certFile, keyFile, pool := loopbackCertificate(t, dir)
		args = append(args, "--cert", certFile, "--key", keyFile)
		transport.TLSClientConfig = &tls.Config{RootCAs: pool}
	}
	addr := startVersitygw(t, bin, args, data, useTLS, transport)
	store, err := blob.NewS3(blob.S3Config{Endpoint: addr, Region: "us-east-1", Bucket: versitygwBucket,
		AccessKey: versitygwAccess, SecretKey: versitygwSecret, UseSSL: useTLS, PathStyle: true, Transport: transport})
	if err != nil {
		t.Fatalf("NewS3: %v", err)
	}
	return store, &http.Client{Transport: transport}
}

// startVersitygw runs the server until it answers with the bucket made, retrying on another
// port if the one picked was taken meanwhile, and returns its host:port.
func startVersitygw(t *testing.T, bin string, args []string, data string, useTLS bool, transport http.RoundTripper) string {
	t.Helper()
	var last error
	for range 3 {
		addr, err := testtool.FreeLoopbackAddr()
		if err != nil {
			t.Fatal(err)
		}
		srv, err := testtool.Start(bin, append(append([]string{"--port", addr}, args...), "posix", data)...)
		if err != nil {
			t.Fatalf("start versitygw: %v", err)
		}
		if last = makeBucket(addr, useTLS, transport, srv.Exited()); last == nil {
			t.Cleanup(srv.Stop)
			return addr
		}
		srv.Stop()
		last = fmt.Errorf("%w\n%s", last, srv.Output())
	}
	t.Fatalf("versitygw did not start: %v", last)
	return ""
}

// makeBucket creates the bucket, retrying while the server is still starting, for at most
// 30 seconds or until the server exits.
func makeBucket(addr string, useTLS bool, transport http.RoundTripper, exited <-chan struct{}) error {
	client, err := minio.New(addr, &minio.Options{Creds: credentials.NewStaticV4(versitygwAccess, versitygwSecret, ""),
		Secure: useTLS, Region: "us-east-1", BucketLookup: minio.BucketLookupPath, Transport: transport})
	if err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = client.MakeBucket(ctx, versitygwBucket, minio.MakeBucketOptions{Region: "us-east-1"})
		cancel()
		if err == nil {
			return nil
		}
		var opErr *net.OpError
		if !errors.As(err, &opErr) || time.Now().After(deadline) {
			return fmt.Errorf("create bucket: %w", err)
		}
		select {
		case <-exited:
			return errors.New("versitygw exited")
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// loopbackCertificate writes a self-signed certificate for 127.0.0.1 into dir and returns
// its files and a pool that trusts it.
func loopbackCertificate(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "versitygw test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	return certFile, keyFile, pool
}
