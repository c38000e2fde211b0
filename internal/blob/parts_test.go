package blob_test

import (
	"errors"
	"strings"
	"testing"

	"till/internal/blob"
)

var (
	digestA = sha256b64([]byte("a"))
	digestB = sha256b64([]byte("b"))
)

// validatePartsCases are specs ValidateParts refuses, with the part and reason it names.
var validatePartsCases = []struct {
	name   string
	size   int64
	parts  []blob.Part
	number int
	reason string
}{
	{"no parts", 0, nil, 0, "no parts"},
	{"a negative size", -1, []blob.Part{{Number: 1}}, 0, "negative size"},
	{"a gap between parts", 20, []blob.Part{{Number: 1, End: 10}, {Number: 2, Start: 11, End: 20}}, 2, "starts at byte 11, expected 10"},
	{"overlapping parts", 20, []blob.Part{{Number: 1, End: 10}, {Number: 2, Start: 9, End: 20}}, 2, "starts at byte 9, expected 10"},
	{"a first part not at 0", 10, []blob.Part{{Number: 1, Start: 1, End: 10}}, 1, "starts at byte 1, expected 0"},
	{"numbering from 0", 10, []blob.Part{{Number: 0, End: 10}}, 0, "expected part number 1"},
	{"a skipped number", 20, []blob.Part{{Number: 1, End: 10}, {Number: 3, Start: 10, End: 20}}, 3, "expected part number 2"},
	{"too many parts", blob.MaxParts + 1, manyParts(blob.MaxParts + 1), 0, "more than 10000 parts"},
	{"an oversized part", blob.MaxPartSize + 1, []blob.Part{{Number: 1, End: blob.MaxPartSize + 1}}, 1, "larger than 5368709120 bytes"},
	{"an empty part before the last", 10, []blob.Part{{Number: 1}, {Number: 2, End: 10}}, 1, "empty part before the last"},
	{"a part ending before it starts", 10, []blob.Part{{Number: 1, Start: 0, End: -1}}, 1, "ends before it starts"},
	{"digests on some parts only", 2, []blob.Part{{Number: 1, End: 1, SHA256Base64: digestA}, {Number: 2, Start: 1, End: 2}}, 0, "either every part or none carries a SHA-256"},
	{"a malformed digest", 1, []blob.Part{{Number: 1, End: 1, SHA256Base64: "not base64!"}}, 1, "checksum is not a base64 SHA-256 digest"},
	{"a digest of the wrong length", 1, []blob.Part{{Number: 1, End: 1, SHA256Base64: "AAAA"}}, 1, "checksum is not a base64 SHA-256 digest"},
	{"parts shorter than the size", 11, []blob.Part{{Number: 1, End: 10}}, 0, "parts cover 10 bytes, the size is 11"},
	{"parts longer than the size", 9, []blob.Part{{Number: 1, End: 10}}, 0, "parts cover 10 bytes, the size is 9"},
}

func manyParts(n int) []blob.Part {
	parts := make([]blob.Part, n)
	for i := range parts {
		parts[i] = blob.Part{Number: i + 1, Start: int64(i), End: int64(i + 1)}
	}
	return parts
}

func TestValidateParts(t *testing.T) {
	for _, c := range validatePartsCases {
		t.Run("refuses "+c.name, func(t *testing.T) {
			err := blob.ValidateParts(c.size, c.parts, 0)
			var pe *blob.PartError
			if !errors.As(err, &pe) || pe.Number != c.number || pe.Reason != c.reason {
				t.Errorf("ValidateParts error = %v, want part %d %q", err, c.number, c.reason)
			}
		})
	}
	valid := []struct {
		name  string
		size  int64
		parts []blob.Part
	}{
		{"one empty part", 0, []blob.Part{{Number: 1}}},
		{"an empty last part", 10, []blob.Part{{Number: 1, End: 10}, {Number: 2, Start: 10, End: 10}}},
		{"digests on every part", 2, []blob.Part{{Number: 1, End: 1, SHA256Base64: digestA}, {Number: 2, Start: 1, End: 2, SHA256Base64: digestB}}},
		{"the most parts", blob.MaxParts, manyParts(blob.MaxParts)},
	}
	for _, c := range valid {
		t.Run("accepts "+c.name, func(t *testing.T) {
			if err := blob.ValidateParts(c.size, c.parts, 0); err != nil {
				t.Errorf("ValidateParts: %v", err)
			}
		})
	}
	t.Run("a smaller part limit applies", func(t *testing.T) {
		err := blob.ValidateParts(10, []blob.Part{{Number: 1, End: 10}}, 5)
		if err == nil || !strings.Contains(err.Error(), "larger than 5 bytes") {
			t.Errorf("ValidateParts with limit 5 = %v", err)
		}
	})
}
