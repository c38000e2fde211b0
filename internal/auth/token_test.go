package auth_test

import (
	"regexp"
	"strings"
	"testing"

	"till/internal/auth"
)

func TestGenerate(t *testing.T) {
	randomPart := regexp.MustCompile(`^[A-Za-z0-9]{43}$`)
	for _, prefix := range auth.KnownPrefixes() {
		t.Run("a "+prefix+" token has the prefix, 43 alphanumerics and a valid checksum", func(t *testing.T) {
			token := auth.Generate(prefix)
			if !strings.HasPrefix(token, prefix) {
				t.Fatalf("Generate(%q) = %q, want that prefix", prefix, token)
			}
			if got, want := len(token), len(prefix)+43; got != want {
				t.Fatalf("len(Generate(%q)) = %d, want %d", prefix, got, want)
			}
			if rest := token[len(prefix):]; !randomPart.MatchString(rest) {
				t.Fatalf("Generate(%q) body %q is not 43 ASCII alphanumerics", prefix, rest)
			}
			if !auth.ChecksumValid(token) {
				t.Fatalf("ChecksumValid(%q) = false for a freshly generated token", token)
			}
		})
	}

	t.Run("two generated tokens differ", func(t *testing.T) {
		seen := make(map[string]bool)
		for range 1000 {
			token := auth.Generate(auth.PrefixOrganizationAccessToken)
			if seen[token] {
				t.Fatalf("Generate returned %q twice", token)
			}
			seen[token] = true
		}
	})

	t.Run("the random part uses the whole alphabet", func(t *testing.T) {
		used := make(map[rune]bool)
		for range 200 {
			token := auth.Generate("")
			for _, c := range token[:37] {
				used[c] = true
			}
		}
		if len(used) != 62 {
			t.Fatalf("7400 random characters used %d distinct symbols, want 62", len(used))
		}
	})
}

func TestChecksumValid(t *testing.T) {
	const random = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJK"
	tests := []struct {
		name  string
		token string
		want  bool
	}{
		{"a checksum computed as upstream's zlib.crc32 in base62 is accepted", "till_oat_" + random + "4WQsSZ", true},
		{"a checksum below 62^5 is left-padded with zero", "till_pat_abcdefghijklmnopqrstuvwxyzABCDEFGHIad0nEWjz", true},
		{"an all-zero random part is accepted", "till_cst_0000000000000000000000000000000000000" + "3jnQlY", true},
		{"a mixed random part is accepted", "till_at_u_Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0PpOoNnM2raM4C", true},
		{"a one-character typo in the random part is rejected", "till_oat_abcdefghijklmnopqrstuvwxyzABCDEFGHIJL4WQsSZ", false},
		{"a one-character typo in the checksum is rejected", "till_oat_" + random + "4WQsSa", false},
		{"a lowercase-folded checksum is rejected", "till_oat_" + random + "4wqssz", false},
		{"a truncated token is rejected", "till_oat_" + random + "4WQsS", false},
		{"a token with an extra character is rejected", "till_oat_" + random + "4WQsSZx", false},
		{"an unknown prefix is rejected", "polar_oat_" + random + "4WQsSZ", false},
		{"a token without prefix is rejected", random + "4WQsSZ", false},
		{"a non-alphanumeric random part is rejected", "till_oat_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ-4WQsSZ", false},
		{"an empty string is rejected", "", false},
		{"a bare prefix is rejected", "till_oat_", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := auth.ChecksumValid(tt.token); got != tt.want {
				t.Fatalf("ChecksumValid(%q) = %v, want %v", tt.token, got, tt.want)
			}
		})
	}

	t.Run("every single-character substitution of a generated token is rejected", func(t *testing.T) {
		token := auth.Generate(auth.PrefixMemberSession)
		start := len(auth.PrefixMemberSession)
		for i := start; i < len(token); i++ {
			b := []byte(token)
			if b[i] == 'a' {
				b[i] = 'b'
			} else {
				b[i] = 'a'
			}
			if auth.ChecksumValid(string(b)) {
				t.Fatalf("ChecksumValid accepted %q, a typo at %d of %q", b, i, token)
			}
		}
	})
}

func TestHash(t *testing.T) {
	secret := []byte("till-test-secret")
	token := "till_oat_abcdefghijklmnopqrstuvwxyzABCDEFGHIJK"
	lowerHex := regexp.MustCompile(`^[0-9a-f]{64}$`)

	t.Run("the hash equals Python's hmac.new(secret, token, sha256).hexdigest()", func(t *testing.T) {
		const want = "007dea66ffb3ab12372c5e23d417a8ffef50cddc64f2a53567cb7da6ca4f6367"
		if got := auth.Hash(secret, token); got != want {
			t.Fatalf("Hash = %s, want %s", got, want)
		}
	})
	t.Run("the hash is stable across calls", func(t *testing.T) {
		if a, b := auth.Hash(secret, token), auth.Hash(secret, token); a != b {
			t.Fatalf("Hash differs between calls: %s vs %s", a, b)
		}
	})
	t.Run("the hash is 64 lowercase hex characters", func(t *testing.T) {
		got := auth.Hash(secret, auth.Generate(auth.PrefixPersonalAccessToken))
		if !lowerHex.MatchString(got) {
			t.Fatalf("Hash = %q, want 64 lowercase hex characters", got)
		}
	})
	t.Run("another secret gives another hash", func(t *testing.T) {
		if auth.Hash(secret, token) == auth.Hash([]byte("other"), token) {
			t.Fatal("Hash ignored the secret")
		}
	})
}

func TestKnownPrefixes(t *testing.T) {
	t.Run("no prefix is the start of another, so a token matches at most one", func(t *testing.T) {
		prefixes := auth.KnownPrefixes()
		for _, a := range prefixes {
			for _, b := range prefixes {
				if a != b && strings.HasPrefix(b, a) {
					t.Errorf("prefix %q starts prefix %q", a, b)
				}
			}
		}
	})
}
