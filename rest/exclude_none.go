package rest

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// excludeNone drops the null members of every object in a JSON document, keeping the order
// and bytes of everything else: FastAPI's response_model_exclude_none, which upstream's
// metrics answer uses so that only the metrics asked for appear.
func excludeNone(doc json.RawMessage) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var out bytes.Buffer
	if err := copyWithoutNulls(dec, &out); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// copyWithoutNulls writes the next value of dec to out, without null object members.
func copyWithoutNulls(dec *json.Decoder, out *bytes.Buffer) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			return copyObject(dec, out)
		case '[':
			out.WriteByte('[')
			for first := true; dec.More(); first = false {
				if !first {
					out.WriteByte(',')
				}
				if err := copyWithoutNulls(dec, out); err != nil {
					return err
				}
			}
			_, err := dec.Token()
			out.WriteByte(']')
			return err
		}
		return fmt.Errorf("unexpected %v", t)
	case nil:
		out.WriteString("null")
	case json.Number:
		out.WriteString(t.String())
	default:
		b, err := json.Marshal(t)
		if err != nil {
			return err
		}
		out.Write(b)
	}
	return nil
}

// copyObject writes the rest of an object whose '{' was read, skipping null members.
func copyObject(dec *json.Decoder, out *bytes.Buffer) error {
	out.WriteByte('{')
	first := true
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return err
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		if string(raw) == "null" {
			continue
		}
		if !first {
			out.WriteByte(',')
		}
		first = false
		name, _ := json.Marshal(key)
		out.Write(name)
		out.WriteByte(':')
		inner := json.NewDecoder(bytes.NewReader(raw))
		inner.UseNumber()
		if err := copyWithoutNulls(inner, out); err != nil {
			return err
		}
	}
	_, err := dec.Token()
	out.WriteByte('}')
	return err
}
