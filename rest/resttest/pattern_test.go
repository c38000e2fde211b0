package resttest

import "testing"

func TestECMAPatternReadsTheContractsLookahead(t *testing.T) {
	const unitAmount = `^(?!^[-+.]*$)[+-]?0*\d*\.?\d*$`
	tests := []struct {
		pattern, in string
		want        bool
	}{
		{unitAmount, "12.5", true},
		{unitAmount, "0.001", true},
		{unitAmount, "-3", true},
		{unitAmount, ".", false},
		{unitAmount, "+-", false},
		{unitAmount, "", false},
		{unitAmount, "1e3", false},
		{"usd", "xusdx", true},
		{"usd", "eur", false},
	}
	for _, tt := range tests {
		m, err := ECMAPattern(tt.pattern)
		if err != nil {
			t.Fatalf("%s: %v", tt.pattern, err)
		}
		if got := m.MatchString(tt.in); got != tt.want {
			t.Errorf("%s on %q = %v, want %v", tt.pattern, tt.in, got, tt.want)
		}
	}
}
