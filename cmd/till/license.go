package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"till/internal/licensecert"
)

// maxInputSize bounds what is read from stdin or the network; real certificates and JWK Sets
// are a few kilobytes at most.
const maxInputSize = 1 << 20

func licenseCmd(ctx context.Context, _ config, args []string, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "verify" {
		fmt.Fprintln(stdout, "Usage: till license verify [--keys FILE|URL] [--at RFC3339] [--leeway DURATION] CERT_FILE")
		if len(args) > 0 && (args[0] == "--help" || args[0] == "-h") {
			return nil
		}
		return fmt.Errorf("unknown license command; try: till license verify --help")
	}
	return licenseVerify(ctx, args[1:], os.Stdin, stdout)
}

// licenseVerify checks an offline license certificate the way an application would, so a
// seller can tell a customer's broken certificate from a broken application.
func licenseVerify(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	fs := newFlags("license verify [--keys FILE|URL] [--at RFC3339] [--leeway DURATION] CERT_FILE",
		"Verifies an offline license certificate (CERT_FILE, or - for stdin) and prints its claims.\n"+
			"Without --keys, the keys are fetched from\n"+
			"  <iss>/.well-known/till/organizations/<organization_id>/license-keys.json\n"+
			"as read from the certificate itself: that proves only that the certificate matches the\n"+
			"keys of the server it names. Pass the seller's keys to check the seller signed it.", stdout)
	keysRef := fs.String("keys", "", "JWK Set file or http(s) URL (default: derived from the certificate)")
	at := fs.String("at", "", "check validity at this RFC 3339 time instead of now")
	leeway := fs.Duration("leeway", 0, "clock skew tolerated around nbf and exp")
	if ok, err := parseFlags(fs, args); !ok {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("exactly one certificate file is required (- for stdin)")
	}
	now := time.Now()
	if *at != "" {
		t, err := time.Parse(time.RFC3339, *at)
		if err != nil {
			return fmt.Errorf("--at: %w", err)
		}
		now = t
	}
	token, err := readCertificate(fs.Arg(0), stdin)
	if err != nil {
		return err
	}
	keys, err := loadKeySet(ctx, *keysRef, token)
	if err != nil {
		return err
	}
	claims, err := licensecert.Verify(token, keys, now, *leeway)
	if err != nil {
		return fmt.Errorf("certificate invalid: %w", err)
	}
	out, err := json.MarshalIndent(claims, "", "  ")
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s\ncertificate valid\n", out)
	return nil
}

func readCertificate(path string, stdin io.Reader) (string, error) {
	var (
		b   []byte
		err error
	)
	if path == "-" {
		b, err = io.ReadAll(io.LimitReader(stdin, maxInputSize))
	} else {
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return "", fmt.Errorf("reading the certificate: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// loadKeySet reads the JWK Set from a file or URL, or, when ref is empty, from the URL the
// certificate's (still unverified) issuer and organization point at.
func loadKeySet(ctx context.Context, ref, token string) (licensecert.KeySet, error) {
	if ref == "" {
		c, err := licensecert.UnverifiedClaims(token)
		if err != nil {
			return licensecert.KeySet{}, fmt.Errorf("certificate invalid: %w", err)
		}
		if !isHTTPURL(c.Issuer) {
			return licensecert.KeySet{}, fmt.Errorf("the certificate's issuer %q is not an http(s) URL; pass --keys", c.Issuer)
		}
		ref = licensecert.JWKSURL(c.Issuer, c.OrganizationID)
	}
	var (
		b   []byte
		err error
	)
	if isHTTPURL(ref) {
		b, err = fetchKeySet(ctx, ref)
	} else {
		b, err = os.ReadFile(ref)
	}
	if err != nil {
		return licensecert.KeySet{}, fmt.Errorf("loading the keys: %w", err)
	}
	keys, err := licensecert.ParseKeySet(b)
	if err != nil {
		return licensecert.KeySet{}, fmt.Errorf("loading the keys from %s: %w", ref, err)
	}
	return keys, nil
}

func isHTTPURL(s string) bool {
	return strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://")
}

func fetchKeySet(ctx context.Context, url string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return io.ReadAll(io.LimitReader(resp.Body, maxInputSize))
}
