package ratelimit

import (
	"encoding/binary"
	"testing"
	"unicode/utf16"
)

func TestLicenseKeyOf(t *testing.T) {
	tests := []struct {
		name string
		body string
		org  string
		key  string
		ok   bool
	}{
		{"plain", keyBody(orgA, "K-1"), orgA, "K-1", true},
		{"whitespace everywhere", " \n{ \"key\" :\t\"K\" , \"organization_id\" : \"" + orgA + "\" }\r\n", orgA, "K", true},
		{"urn organization", keyBody("urn:uuid:"+orgA, "K"), orgA, "K", true},
		{"escapes in key", `{"key":"a\"b\\c\u00e9","organization_id":"` + orgA + `"}`, orgA, "a\"b\\cé", true},
		{"escaped member name", `{"k\u0065y":"K","organization_id":"` + orgA + `"}`, orgA, "K", true},
		{"nested members named key are ignored", `{"meta":{"key":"X"},"key":"K","organization_id":"` + orgA + `"}`, orgA, "K", true},
		{"strings containing brackets", `{"label":"}]{[,","key":"K","organization_id":"` + orgA + `"}`, orgA, "K", true},
		{"Infinity and big numbers", `{"a":-Infinity,"b":1e999,"c":123456789012345678901234567890,"key":"K","organization_id":"` + orgA + `"}`, orgA, "K", true},
		{"later non-string duplicate clears", `{"key":"K","key":null,"organization_id":"` + orgA + `"}`, "", "", false},
		{"empty key", keyBody(orgA, ""), "", "", false},
		{"invalid organization", keyBody("nope", "K"), "", "", false},
		{"array", `[` + keyBody(orgA, "K") + `]`, "", "", false},
		{"empty object", `{}`, "", "", false},
		{"empty", ``, "", "", false},
		{"unterminated string", `{"key":"K`, "", "", false},
		{"missing colon", `{"key" "K"}`, "", "", false},
		{"unterminated object", `{"key":"K","organization_id":"` + orgA + `"`, "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			org, key, ok := licenseKeyOf([]byte(tt.body))
			if org != tt.org || key != tt.key || ok != tt.ok {
				t.Fatalf("got (%q, %q, %v), want (%q, %q, %v)", org, key, ok, tt.org, tt.key, tt.ok)
			}
		})
	}
}

func TestLicenseKeyOfDetectsEncoding(t *testing.T) {
	text := keyBody(orgA, "Kö")
	tests := []struct {
		name string
		body []byte
	}{
		{"UTF-8 BOM", append([]byte{0xef, 0xbb, 0xbf}, text...)},
		{"UTF-16BE", encode16(text, binary.BigEndian, nil)},
		{"UTF-16LE", encode16(text, binary.LittleEndian, nil)},
		{"UTF-16BE with BOM", encode16(text, binary.BigEndian, []byte{0xfe, 0xff})},
		{"UTF-16LE with BOM", encode16(text, binary.LittleEndian, []byte{0xff, 0xfe})},
		{"UTF-32BE", encode32(text, binary.BigEndian, nil)},
		{"UTF-32LE", encode32(text, binary.LittleEndian, nil)},
		{"UTF-32BE with BOM", encode32(text, binary.BigEndian, []byte{0, 0, 0xfe, 0xff})},
		{"UTF-32LE with BOM", encode32(text, binary.LittleEndian, []byte{0xff, 0xfe, 0, 0})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			org, key, ok := licenseKeyOf(tt.body)
			if !ok || org != orgA || key != "Kö" {
				t.Fatalf("got (%q, %q, %v)", org, key, ok)
			}
		})
	}
	if _, _, ok := licenseKeyOf(encode16(text, binary.BigEndian, nil)[1:]); ok {
		t.Fatal("odd-length UTF-16 accepted")
	}
}

func encode16(s string, order binary.AppendByteOrder, bom []byte) []byte {
	out := append([]byte(nil), bom...)
	for _, u := range utf16.Encode([]rune(s)) {
		out = order.AppendUint16(out, u)
	}
	return out
}

func encode32(s string, order binary.AppendByteOrder, bom []byte) []byte {
	out := append([]byte(nil), bom...)
	for _, r := range s {
		out = order.AppendUint32(out, uint32(r))
	}
	return out
}
