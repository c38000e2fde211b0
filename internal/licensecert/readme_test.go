package licensecert

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// The README shows applications how to verify a certificate with the standard library
// alone; this runs that code against certificates this package signs, so it stays true.
func TestReadmeVerificationExample(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```go\n(// verify checks.*?)```").FindSubmatch(readme)
	if m == nil {
		t.Fatal("README has no verify example")
	}
	dir := t.TempDir()
	program := "package main\n\nimport (\n\t\"crypto/ed25519\"\n\t\"encoding/base64\"\n\t\"encoding/json\"\n\t\"errors\"\n\t\"fmt\"\n\t\"os\"\n\t\"strings\"\n\t\"time\"\n)\n\n" +
		string(m[1]) + `
func main() {
	cert, _ := os.ReadFile(os.Args[1])
	jwks, _ := os.ReadFile(os.Args[2])
	claims, err := verify(string(cert), jwks, time.Now())
	if err != nil {
		fmt.Println("invalid:", err)
		return
	}
	fmt.Println("valid", claims["display_key"])
}
`
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("go.mod", "module example\n\ngo 1.22\n")
	write("main.go", program)
	bin := filepath.Join(dir, "verify")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir, build.Env = dir, append(os.Environ(), "GOFLAGS=", "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("the README example does not build: %v\n%s", err, out)
	}

	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	other, _, _ := ed25519.GenerateKey(rand.Reader)
	now := time.Now()
	sign := func(exp time.Time) string {
		tok, err := Sign(priv, KeyID(pub), Claims{Subject: "k", IssuedAt: now.Unix(), NotBefore: now.Unix(), Expiry: exp.Unix(),
			LicenseKeyID: uuid.New(), DisplayKey: "****-ABC123", Status: "granted"})
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	keys := func(pubs ...ed25519.PublicKey) string {
		var set KeySet
		for _, p := range pubs {
			set.Keys = append(set.Keys, NewJWK(p, nil))
		}
		b, _ := json.Marshal(set)
		return string(b)
	}
	valid := sign(now.Add(time.Hour))
	tampered := valid[:strings.LastIndex(valid, ".")+1] + strings.Repeat("A", 86)
	tests := []struct {
		name, cert, jwks, want string
	}{
		{"a valid certificate", valid, keys(other, pub), "valid ****-ABC123"},
		{"a tampered signature", tampered, keys(pub), "invalid: signature does not match a published key"},
		{"an unknown key", valid, keys(other), "invalid: signature does not match a published key"},
		{"an expired certificate", sign(now.Add(-time.Second)), keys(pub), "invalid: certificate outside its validity window"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := exec.Command(bin, write("cert", tt.cert), write("jwks.json", tt.jwks)).CombinedOutput()
			if err != nil || strings.TrimSpace(string(out)) != tt.want {
				t.Errorf("output %q (%v), want %q", out, err, tt.want)
			}
		})
	}
}
