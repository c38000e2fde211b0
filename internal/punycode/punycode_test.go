package punycode_test

import (
	"testing"

	"till/internal/punycode"
)

// RFC 3492 §7.1 samples and common host labels, both ways.
func TestEncodeAndDecodeAgree(t *testing.T) {
	cases := []struct{ label, encoded string }{
		{"bücher", "bcher-kva"},
		{"münchen", "mnchen-3ya"},
		{"例え", "r8jz45g"},
		{"ليهمابتكلموشعربي؟", "egbpdaj6bu4bxfgehfvwxn"},
		{"他们为什么不说中文", "ihqwcrb4cv8a8dqg056pqjye"},
		{"3年b組金八先生", "3b-ww4c5e180e575a65lsy2b"},
	}
	for _, c := range cases {
		t.Run(c.label, func(t *testing.T) {
			if got := punycode.Encode(c.label); got != c.encoded {
				t.Errorf("Encode(%q) = %q, want %q", c.label, got, c.encoded)
			}
			if got, ok := punycode.Decode(c.encoded); !ok || got != c.label {
				t.Errorf("Decode(%q) = %q, %v; want %q", c.encoded, got, ok, c.label)
			}
		})
	}
}

func TestDecodeRefusesMalformedLabels(t *testing.T) {
	for _, s := range []string{
		"",             // nothing encoded
		"abc-",         // basic code points only
		"bcher-kv!",    // not a digit
		"bcher-kv",     // ends inside a number
		"é-kva",        // non-ASCII basic code point
		"99999999999a", // overflows
		"zzzzzzzzz",    // beyond the last code point
	} {
		if got, ok := punycode.Decode(s); ok {
			t.Errorf("Decode(%q) = %q, accepted", s, got)
		}
	}
}
