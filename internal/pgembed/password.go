package pgembed

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// A cluster started with a TCP port lets other processes in (a `till worker` with its own
// data directory, a `till serve` in a container on the same host) through password
// authentication. The superuser's password is made on the first such start and kept in the
// cluster root, readable by its owner only; every start with a port sets it again, so the
// file is the truth. TCPDSN hands it out.

// passwordFile is the name of the superuser's password file in the cluster root.
const passwordFile = "password"

// ensurePassword makes the superuser's password on first use and sets it on the server.
func (c *Cluster) ensurePassword(ctx context.Context) error {
	pw, err := c.password()
	if errors.Is(err, fs.ErrNotExist) {
		b := make([]byte, 24)
		if _, err := rand.Read(b); err != nil {
			return fmt.Errorf("pgembed: %w", err)
		}
		pw = hex.EncodeToString(b)
		if err := os.WriteFile(c.passwordPath(), []byte(pw+"\n"), 0o600); err != nil {
			return fmt.Errorf("pgembed: %w", err)
		}
	} else if err != nil {
		return err
	}
	db, err := sql.Open("postgres", c.DSN("postgres"))
	if err != nil {
		return fmt.Errorf("pgembed: %w", err)
	}
	defer db.Close()
	// The password is hex, so quoting it in the statement (which takes no parameters) is safe.
	if _, err := db.ExecContext(ctx, `ALTER ROLE `+Superuser+` PASSWORD '`+pw+`'`); err != nil {
		return fmt.Errorf("pgembed: setting the password for TCP connections: %w", err)
	}
	return nil
}

func (c *Cluster) passwordPath() string { return filepath.Join(c.layout.root, passwordFile) }

// password reads the superuser's password; an error wrapping fs.ErrNotExist when none was
// made yet.
func (c *Cluster) password() (string, error) {
	b, err := os.ReadFile(c.passwordPath())
	if err != nil {
		return "", fmt.Errorf("pgembed: reading the password: %w", err)
	}
	pw := strings.TrimSpace(string(b))
	for _, r := range pw {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return "", fmt.Errorf("pgembed: %s does not hold a password this package made", c.passwordPath())
		}
	}
	return pw, nil
}

// TCPDSN is a URL other processes connect to database with over TCP, with the superuser's
// password; an error when the cluster has no TCP port.
func (c *Cluster) TCPDSN(database string) (string, error) {
	if !c.tcp {
		return "", errors.New("pgembed: the cluster listens on its socket only; give it a TCP port (TILL_PG_PORT)")
	}
	pw, err := c.password()
	if err != nil {
		return "", err
	}
	u := url.URL{Scheme: "postgres", User: url.UserPassword(Superuser, pw),
		Host: "127.0.0.1:" + strconv.Itoa(c.port), Path: "/" + database, RawQuery: "sslmode=disable"}
	return u.String(), nil
}
