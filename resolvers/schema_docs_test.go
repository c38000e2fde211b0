package resolvers_test

import (
	"fmt"
	"path"
	"sort"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"

	"till/resolvers"
)

// schemaFinding is one schema element a rule refuses, where its file declares it.
type schemaFinding struct {
	file string
	line int
	what string
}

// schemaFindings groups findings by file, each file's in line order.
type schemaFindings map[string][]schemaFinding

func (f schemaFindings) add(pos *ast.Position, format string, args ...any) {
	file, line := "unknown", 0
	if pos != nil && pos.Src != nil {
		file, line = path.Base(pos.Src.Name), pos.Line
	}
	f[file] = append(f[file], schemaFinding{file: file, line: line, what: fmt.Sprintf(format, args...)})
}

// report runs one subtest per schema file, so a file's findings can be read (and run) on
// their own: go test -run 'TestEverySchemaElementIsDescribed/checkout.graphqls'.
func (f schemaFindings) report(t *testing.T, files []string, rule string) {
	t.Helper()
	for _, file := range files {
		t.Run(file, func(t *testing.T) {
			found := f[file]
			if len(found) == 0 {
				return
			}
			sort.SliceStable(found, func(i, j int) bool { return found[i].line < found[j].line })
			var b strings.Builder
			for _, x := range found {
				fmt.Fprintf(&b, "\n  %s:%d: %s", file, x.line, x.what)
			}
			t.Errorf("%d %s:%s", len(found), rule, b.String())
		})
	}
}

// ownSchema is the executable schema without what GraphQL itself declares (built-in
// scalars and directives, introspection types), and the names of the files it comes from.
func ownSchema(t *testing.T) (*ast.Schema, []string) {
	t.Helper()
	schema := resolvers.New(resolvers.Deps{}).Schema().Schema()
	files := map[string]bool{}
	for _, typ := range schema.Types {
		if own(typ.Name, typ.Position) {
			files[path.Base(typ.Position.Src.Name)] = true
		}
		for _, f := range typ.Fields {
			if own(f.Name, f.Position) {
				files[path.Base(f.Position.Src.Name)] = true
			}
		}
	}
	if len(files) < 10 {
		t.Fatalf("found %d schema files: the enumeration is broken", len(files))
	}
	names := make([]string, 0, len(files))
	for f := range files {
		names = append(names, f)
	}
	sort.Strings(names)
	return schema, names
}

// own reports whether an element is declared by Till's schema files.
func own(name string, pos *ast.Position) bool {
	return !strings.HasPrefix(name, "__") && pos != nil && pos.Src != nil && !pos.Src.BuiltIn
}

// TestEverySchemaElementIsDescribed holds the schema to documenting itself: every type,
// field, argument, input field, enum value and directive a client can see in the SDL says
// what it is for, so a new one cannot land bare.
func TestEverySchemaElementIsDescribed(t *testing.T) {
	t.Parallel()
	schema, files := ownSchema(t)
	missing := schemaFindings{}
	arguments := func(owner string, args ast.ArgumentDefinitionList) {
		for _, a := range args {
			if strings.TrimSpace(a.Description) == "" {
				missing.add(a.Position, "argument %s(%s:)", owner, a.Name)
			}
		}
	}
	for _, typ := range schema.Types {
		if !own(typ.Name, typ.Position) {
			continue
		}
		if strings.TrimSpace(typ.Description) == "" && !rootType(schema, typ) {
			missing.add(typ.Position, "%s %s", strings.ToLower(string(typ.Kind)), typ.Name)
		}
		for _, f := range typ.Fields {
			if !own(f.Name, f.Position) {
				continue
			}
			if strings.TrimSpace(f.Description) == "" {
				kind := "field"
				if typ.Kind == ast.InputObject {
					kind = "input field"
				}
				missing.add(f.Position, "%s %s.%s", kind, typ.Name, f.Name)
			}
			arguments(typ.Name+"."+f.Name, f.Arguments)
		}
		for _, v := range typ.EnumValues {
			if strings.TrimSpace(v.Description) == "" {
				missing.add(v.Position, "enum value %s.%s", typ.Name, v.Name)
			}
		}
	}
	for _, d := range schema.Directives {
		if !own(d.Name, d.Position) {
			continue
		}
		if strings.TrimSpace(d.Description) == "" {
			missing.add(d.Position, "directive @%s", d.Name)
		}
		arguments("@"+d.Name, d.Arguments)
	}
	missing.report(t, files, "schema elements without a description")
}

// rootType reports the operation types, which the SDL cannot describe where most of their
// fields are declared (extend type Query has no description); their fields carry the docs.
func rootType(schema *ast.Schema, typ *ast.Definition) bool {
	return typ == schema.Query || typ == schema.Mutation || typ == schema.Subscription
}

// openJSON lists the schema's JSON fields, inputs and arguments with why each keeps the
// untyped scalar: its shape is open by nature (user-defined, per kind, a payload), it is a
// map keyed by data that no GraphQL type can spell, or it is /v1's rendering of a typed field
// beside it. Any other JSON must become a type. Entries are grouped by schema file.
var openJSON = map[string]string{
	// audit.graphqls
	"AuditChange.before": "the value of any column of any audited table, as the database holds it",
	"AuditChange.after":  "the value of any column of any audited table, as the database holds it",
	// benefit.graphqls
	"Benefit.properties":            "discord, github_repository, feature_flag and slack_shared_channel properties are kept as sent; the types Till manages have typed fields beside it",
	"BenefitCreateInput.properties": "one shape per benefit type and GraphQL has no input unions; the server checks each against the contract",
	"BenefitUpdateInput.properties": "one shape per benefit type and GraphQL has no input unions; the server checks each against the contract",
	// checkout.graphqls
	"Checkout.prices":                                  "a map keyed by product id; products[].prices holds the same prices typed",
	"Checkout.wireProductPrice":                        "productPrice as /v1 renders it: JSON costs no points, which keeps /v1's page of 100 checkouts under the cost ceiling",
	"CheckoutProduct.wirePrices":                       "prices as /v1 renders them: JSON costs no points, which keeps /v1's page of 100 checkouts under the cost ceiling",
	"Checkout.attachedCustomFields":                    "always empty: Till has no custom fields to attach",
	"CheckoutDiscountFixedOnceForeverDuration.amounts": "a map keyed by currency code",
	"CheckoutDiscountFixedRepeatDuration.amounts":      "a map keyed by currency code",
	// customer.graphqls
	"Customer.oauthAccounts": "a map keyed by OAuth platform",
	// domain_event.graphqls
	"DomainEvent.payload": "a webhook payload: its data is the /v1 shape of the event's object, one per event type",
	// event_ingest.graphqls
	"UsageEventInput.metadata": "the seller's own event properties",
	// file.graphqls
	"FileUploadPart.headers": "a map keyed by HTTP header name",
	// grant.graphqls
	"CustomerSeat.seatMetadata":        "the seller's own data kept with the seat",
	"CustomerSeatAssignInput.metadata": "the seller's own data to keep with the seat: any JSON object, unlike Metadata",
	"PortalSeatAssignInput.metadata":   "the seller's own data to keep with the seat: any JSON object, unlike Metadata",
	// job.graphqls
	"Job.args": "one shape per job kind, internal to the worker that runs it",
}

// TestJSONIsOnlyWhereTheShapeIsOpen fails on a field, input field or argument of type JSON
// that openJSON does not list with its reason, and on a listed one that no longer exists.
func TestJSONIsOnlyWhereTheShapeIsOpen(t *testing.T) {
	t.Parallel()
	schema, files := ownSchema(t)
	untyped, seen := schemaFindings{}, map[string]bool{}
	check := func(name string, typ *ast.Type, pos *ast.Position) {
		if typ.Name() != "JSON" {
			return
		}
		seen[name] = true
		if openJSON[name] == "" {
			untyped.add(pos, "%s is JSON: give it a type, or list it in openJSON with why its shape is open", name)
		}
	}
	for _, typ := range schema.Types {
		if !own(typ.Name, typ.Position) {
			continue
		}
		for _, f := range typ.Fields {
			if !own(f.Name, f.Position) {
				continue
			}
			check(typ.Name+"."+f.Name, f.Type, f.Position)
			for _, a := range f.Arguments {
				check(typ.Name+"."+f.Name+"("+a.Name+":)", a.Type, a.Position)
			}
		}
	}
	untyped.report(t, files, "untyped JSON fields")
	for name := range openJSON {
		if !seen[name] {
			t.Errorf("openJSON lists %s, which is not a JSON field of the schema", name)
		}
	}
}
