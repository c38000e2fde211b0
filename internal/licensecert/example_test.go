package licensecert_test

import (
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"

	"till/internal/licensecert"
)

// An application ships (or caches) its seller's license-keys.json, and the customer's
// certificate sits in a file. Checking the license needs no network.
func ExampleVerify() {
	dir := issueSampleFiles() // stands in for Till: writes license-keys.json and license.cert
	defer os.RemoveAll(dir)

	keysJSON, err := os.ReadFile(filepath.Join(dir, "license-keys.json"))
	if err != nil {
		log.Fatal(err)
	}
	keys, err := licensecert.ParseKeySet(keysJSON)
	if err != nil {
		log.Fatal(err)
	}
	cert, err := os.ReadFile(filepath.Join(dir, "license.cert"))
	if err != nil {
		log.Fatal(err)
	}
	claims, err := licensecert.Verify(strings.TrimSpace(string(cert)), keys, time.Now(), 5*time.Minute)
	if err != nil {
		fmt.Println("license rejected:", err)
		return
	}
	if claims.Status != "granted" {
		fmt.Println("license", claims.Status)
		return
	}
	fmt.Printf("licensed: %s, activation %q\n", claims.DisplayKey, claims.Activation.Label)
	// Output: licensed: ****-4F2A, activation "laptop"
}

// issueSampleFiles does Till's part: sign a 30-day certificate and publish the key.
func issueSampleFiles() string {
	dir, err := os.MkdirTemp("", "licensecert-example")
	if err != nil {
		log.Fatal(err)
	}
	seed := make([]byte, ed25519.SeedSize) // a fixed key keeps the example reproducible
	priv := ed25519.NewKeyFromSeed(seed)
	pub := priv.Public().(ed25519.PublicKey)
	now, keyID := time.Now(), uuid.New()
	cert, err := licensecert.Sign(priv, licensecert.KeyID(pub), licensecert.Claims{
		Issuer: "https://till.example.com", Subject: keyID.String(),
		IssuedAt: now.Unix(), NotBefore: now.Unix(), Expiry: now.Add(30 * 24 * time.Hour).Unix(),
		OrganizationID: uuid.New(), LicenseKeyID: keyID, DisplayKey: "****-4F2A",
		CustomerID: uuid.New(), BenefitID: uuid.New(), Status: "granted",
		Activation: &licensecert.Activation{ID: uuid.New(), Label: "laptop"},
	})
	if err != nil {
		log.Fatal(err)
	}
	keys, _ := json.Marshal(licensecert.KeySet{Keys: []licensecert.JWK{licensecert.NewJWK(pub, nil)}})
	for name, body := range map[string]string{"license-keys.json": string(keys), "license.cert": cert + "\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			log.Fatal(err)
		}
	}
	return dir
}
