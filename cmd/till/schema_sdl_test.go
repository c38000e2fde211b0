package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/formatter"
)

func TestSchemaSDLIsServed(t *testing.T) {
	h, _ := testHandler(t, map[string]string{}, &syncBuffer{})
	get := func(t *testing.T, header http.Header) *httptest.ResponseRecorder {
		t.Helper()
		req := httptest.NewRequest(http.MethodGet, "/graphql/schema.graphql", nil)
		for k, v := range header {
			req.Header[k] = v
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	first := get(t, nil)

	t.Run("anyone gets the SDL as text without a token", func(t *testing.T) {
		if first.Code != http.StatusOK {
			t.Fatalf("GET = %d %s", first.Code, first.Body)
		}
		if ct := first.Header().Get("Content-Type"); ct != "text/plain; charset=utf-8" {
			t.Errorf("Content-Type = %q", ct)
		}
	})

	t.Run("the SDL parses back into the same schema, descriptions included", func(t *testing.T) {
		schema, err := gqlparser.LoadSchema(&ast.Source{Name: "schema.graphql", Input: first.Body.String()})
		if err != nil {
			t.Fatalf("the served SDL does not parse: %v", err)
		}
		var again bytes.Buffer
		formatter.NewFormatter(&again, formatter.WithIndent("  ")).FormatSchema(schema)
		if again.String() != first.Body.String() {
			t.Error("formatting the parsed SDL gives another text: something was lost")
		}
		order := schema.Types["Order"]
		if order == nil || order.Description == "" || order.Fields.ForName("totalAmount") == nil {
			t.Fatalf("Order is missing or undescribed: %+v", order)
		}
		if schema.Query == nil || schema.Query.Fields.ForName("orders") == nil || schema.Mutation == nil {
			t.Error("the root types are missing")
		}
		if schema.Directives["hasScope"] == nil {
			t.Error("the @hasScope directive is not declared")
		}
	})

	t.Run("a client revalidates its copy with the ETag", func(t *testing.T) {
		etag := first.Header().Get("ETag")
		if etag == "" || first.Header().Get("Cache-Control") == "" {
			t.Fatalf("ETag %q, Cache-Control %q", etag, first.Header().Get("Cache-Control"))
		}
		rec := get(t, http.Header{"If-None-Match": {etag}})
		if rec.Code != http.StatusNotModified || rec.Body.Len() != 0 {
			t.Errorf("GET with If-None-Match = %d with %d bytes, want 304 and none", rec.Code, rec.Body.Len())
		}
		if rec := get(t, http.Header{"If-None-Match": {`"stale"`}}); rec.Code != http.StatusOK {
			t.Errorf("GET with a stale ETag = %d, want 200", rec.Code)
		}
	})
}
