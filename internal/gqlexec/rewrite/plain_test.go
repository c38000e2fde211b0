package main

import (
	"strings"
	"testing"
)

// generatedObject is the shape gqlgen gives an object's executor and its field functions:
// id is plain, name is a nullable plain pointer, due a non-null pointer, total a getter
// method, paid a resolver and secret a plain read behind a directive.
const generatedObject = `package graph

import (
	"context"
	"errors"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

type Thing struct {
	ID     string
	Name   *string
	Due    *int
	Secret string
}

type executionContext struct{ *graphql.OperationContext }

var thingImplementors = []string{"Thing"}

func (ec *executionContext) _Thing(ctx context.Context, sel ast.SelectionSet, obj *Thing) graphql.Marshaler {
	fields := graphql.CollectFields(ec.OperationContext, sel, thingImplementors)

	out := graphql.NewFieldSet(fields)
	for i, field := range fields {
		switch field.Name {
		case "id":
			out.Values[i] = ec._Thing_id(ctx, field, obj)
		case "due":
			out.Values[i] = ec._Thing_due(ctx, field, obj)
		case "paid":
			out.Values[i] = ec._Thing_paid(ctx, field, obj)
		}
	}
	return out
}

func (ec *executionContext) _Thing_id(ctx context.Context, field graphql.CollectedField, obj *Thing) (ret graphql.Marshaler) {
	return graphql.ResolveField(ctx, ec.OperationContext, field,
		func(ctx context.Context, field graphql.CollectedField) (*graphql.FieldContext, error) {
			return ec.fieldContext_Thing_id(ctx, field)
		},
		func(ctx context.Context) (any, error) {
			return obj.ID, nil
		},
		nil,
		func(ctx context.Context, selections ast.SelectionSet, v string) graphql.Marshaler {
			return ec.marshalNID2string(ctx, selections, v)
		},
		true,
		true,
	)
}

func (ec *executionContext) fieldContext_Thing_id(_ context.Context, field graphql.CollectedField) (fc *graphql.FieldContext, err error) {
	return graphql.NewScalarFieldContext("Thing", field, false, false, errors.New("no child fields"))
}

func (ec *executionContext) _Thing_name(ctx context.Context, field graphql.CollectedField, obj *Thing) (ret graphql.Marshaler) {
	return graphql.ResolveField(ctx, ec.OperationContext, field,
		func(ctx context.Context, field graphql.CollectedField) (*graphql.FieldContext, error) {
			return ec.fieldContext_Thing_name(ctx, field)
		},
		func(ctx context.Context) (any, error) {
			return obj.Name, nil
		},
		nil,
		func(ctx context.Context, selections ast.SelectionSet, v *string) graphql.Marshaler {
			return ec.marshalOString2ᚖstring(ctx, selections, v)
		},
		true,
		false,
	)
}

func (ec *executionContext) fieldContext_Thing_name(_ context.Context, field graphql.CollectedField) (fc *graphql.FieldContext, err error) {
	return graphql.NewScalarFieldContext("Thing", field, false, false, errors.New("no child fields"))
}

func (ec *executionContext) _Thing_due(ctx context.Context, field graphql.CollectedField, obj *Thing) (ret graphql.Marshaler) {
	return graphql.ResolveField(ctx, ec.OperationContext, field,
		func(ctx context.Context, field graphql.CollectedField) (*graphql.FieldContext, error) {
			return ec.fieldContext_Thing_due(ctx, field)
		},
		func(ctx context.Context) (any, error) {
			return obj.Due, nil
		},
		nil,
		func(ctx context.Context, selections ast.SelectionSet, v *int) graphql.Marshaler {
			return ec.marshalNInt2ᚖint(ctx, selections, v)
		},
		true,
		true,
	)
}

func (ec *executionContext) fieldContext_Thing_due(_ context.Context, field graphql.CollectedField) (fc *graphql.FieldContext, err error) {
	return graphql.NewScalarFieldContext("Thing", field, false, false, errors.New("no child fields"))
}

func (ec *executionContext) _Thing_total(ctx context.Context, field graphql.CollectedField, obj *Thing) (ret graphql.Marshaler) {
	return graphql.ResolveField(ctx, ec.OperationContext, field,
		func(ctx context.Context, field graphql.CollectedField) (*graphql.FieldContext, error) {
			return ec.fieldContext_Thing_total(ctx, field)
		},
		func(ctx context.Context) (any, error) {
			return obj.Total(), nil
		},
		nil,
		func(ctx context.Context, selections ast.SelectionSet, v int) graphql.Marshaler {
			return ec.marshalNInt2int(ctx, selections, v)
		},
		true,
		true,
	)
}

func (ec *executionContext) fieldContext_Thing_total(_ context.Context, field graphql.CollectedField) (fc *graphql.FieldContext, err error) {
	return graphql.NewScalarFieldContext("Thing", field, true, false, errors.New("no child fields"))
}

func (ec *executionContext) _Thing_paid(ctx context.Context, field graphql.CollectedField, obj *Thing) (ret graphql.Marshaler) {
	return graphql.ResolveField(ctx, ec.OperationContext, field,
		func(ctx context.Context, field graphql.CollectedField) (*graphql.FieldContext, error) {
			return ec.fieldContext_Thing_paid(ctx, field)
		},
		func(ctx context.Context) (any, error) {
			return ec.Resolvers.Thing().Paid(ctx, obj)
		},
		nil,
		func(ctx context.Context, selections ast.SelectionSet, v bool) graphql.Marshaler {
			return ec.marshalNBoolean2bool(ctx, selections, v)
		},
		true,
		true,
	)
}

func (ec *executionContext) fieldContext_Thing_paid(_ context.Context, field graphql.CollectedField) (fc *graphql.FieldContext, err error) {
	return graphql.NewScalarFieldContext("Thing", field, true, true, errors.New("no child fields"))
}

func (ec *executionContext) _Thing_secret(ctx context.Context, field graphql.CollectedField, obj *Thing) (ret graphql.Marshaler) {
	return graphql.ResolveField(ctx, ec.OperationContext, field,
		func(ctx context.Context, field graphql.CollectedField) (*graphql.FieldContext, error) {
			return ec.fieldContext_Thing_secret(ctx, field)
		},
		func(ctx context.Context) (any, error) {
			return obj.Secret, nil
		},
		func(ctx context.Context, next graphql.Resolver) graphql.Resolver {
			return next
		},
		func(ctx context.Context, selections ast.SelectionSet, v string) graphql.Marshaler {
			return ec.marshalNString2string(ctx, selections, v)
		},
		true,
		true,
	)
}

func (ec *executionContext) fieldContext_Thing_secret(_ context.Context, field graphql.CollectedField) (fc *graphql.FieldContext, err error) {
	return graphql.NewScalarFieldContext("Thing", field, false, false, errors.New("no child fields"))
}
`

func TestPlainWriters(t *testing.T) {
	out, err := rewrite([]byte(generatedObject))
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	for _, want := range []string{
		"if m := ec._Thing__plain(ctx, fields, obj); m != nil {",
		"if m := gqlexec.RenderedOf(obj); m != nil {",
		`"till/internal/gqlexec"`,
		`case "__typename", "id", "name", "total":`,
		"ec.marshalNInt2int(ctx, f.Selections, obj.Total()).MarshalGQL(w)",
		"if obj.Due == nil {",
		"ec.marshalNID2string(ctx, f.Selections, obj.ID).MarshalGQL(w)",
		"ec.marshalOString2ᚖstring(ctx, f.Selections, obj.Name).MarshalGQL(w)",
		`graphql.MarshalString("Thing").MarshalGQL(w)`,
		`"io"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	for _, want := range []string{
		"out.Values[i] = ec.marshalNID2string(ctx, field.Selections, obj.ID)",
		"out.Values[i] = ec._Thing_due(ctx, field, obj)",
		"out.Values[i] = ec._Thing_paid(ctx, field, obj)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the executor's switch lacks %q:\n%s", want, got)
		}
	}
	for _, refused := range []string{"Paid(ctx, obj)).MarshalGQL", `case "secret"`, "obj.Secret).MarshalGQL", "obj.Secret)\n"} {
		if strings.Contains(got, refused) {
			t.Errorf("a field that is not plain is written: %q", refused)
		}
	}
	if strings.Index(got, "ec._Thing__plain(ctx, fields, obj)") > strings.Index(got, "out := graphql.NewFieldSet(fields)") {
		t.Error("the executor collects into a field set before trying the plain writer")
	}
	if strings.Index(got, "gqlexec.RenderedOf(obj)") > strings.Index(got, "fields := gqlexec.CollectFields(ctx, ") {
		t.Error("the executor collects the fields before looking for the record's JSON")
	}
	_, objects, err := rewriteFile([]byte(generatedObject), nil)
	if err != nil || len(objects) != 1 {
		t.Fatalf("objects: %v %v", objects, err)
	}
	table, err := plainTable("graph", objects)
	if err != nil {
		t.Fatal(err)
	}
	if want := `"Thing": {GoType: "*Thing", Fields: map[string]string{"due": "Due", "id": "ID", "name": "Name"}, ` +
		`Kinds: map[string]string{"due": "number", "id": "text", "name": "text"}, Getters: map[string]string{"total": "Total"}},`; !strings.Contains(string(table), want) {
		t.Errorf("the table lacks %s (a getter method reads no column one can name):\n%s", want, table)
	}
	again, err := rewrite(out)
	if err != nil || string(again) != got {
		t.Errorf("a second rewrite changed the output (err %v)", err)
	}
}

// generatedHome is an object with no plain field (its one field has a resolver), as gqlgen
// writes the portal's root.
const generatedHome = `package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

type Home struct{ Child *Home }

type executionContext struct{ *graphql.OperationContext }

var homeImplementors = []string{"Home"}

func (ec *executionContext) _Home(ctx context.Context, sel ast.SelectionSet, obj *Home) graphql.Marshaler {
	fields := graphql.CollectFields(ec.OperationContext, sel, homeImplementors)

	out := graphql.NewFieldSet(fields)
	for i, field := range fields {
		switch field.Name {
		case "child":
			out.Values[i] = ec.resolveChild(ctx, field, obj)
		}
	}
	return out
}
`

// TestObjectsWithoutPlainFieldsGetTheHookAlone: an object of a pointer with no plain field
// still asks for the JSON its record may carry (storage.Me), and gets no plain writer.
func TestObjectsWithoutPlainFieldsGetTheHookAlone(t *testing.T) {
	out, err := rewrite([]byte(generatedHome))
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	if !strings.Contains(got, "if m := gqlexec.RenderedOf(obj); m != nil {") ||
		strings.Index(got, "gqlexec.RenderedOf(obj)") > strings.Index(got, "fields := gqlexec.CollectFields(ctx, ") {
		t.Errorf("the executor does not look for the record's JSON first:\n%s", got)
	}
	for _, refused := range []string{"__plain", `"io"`} {
		if strings.Contains(got, refused) {
			t.Errorf("an object without plain fields got %q:\n%s", refused, got)
		}
	}
	if again, err := rewrite(out); err != nil || string(again) != got {
		t.Errorf("a second rewrite changed the output (err %v)", err)
	}
	_, objects, err := rewriteFile([]byte(generatedHome), nil)
	if err != nil || len(objects) != 0 {
		t.Errorf("the table would list an object without plain fields: %v %v", objects, err)
	}
}

// generatedMarshallers are gqlgen's marshallers of an enum bound to a named string type (a
// cast to string, non-null and nullable), of a plain string, and of a type that marshals
// itself.
const generatedMarshallers = `package graph

func (ec *executionContext) marshalNOrderStatus2tillᚋstorageᚐOrderStatus(ctx context.Context, sel ast.SelectionSet, v storage.OrderStatus) graphql.Marshaler {
	_ = sel
	res := scalar.MarshalString(string(v))
	return res
}

func (ec *executionContext) marshalOInterval2ᚖtillᚋstorageᚐInterval(ctx context.Context, sel ast.SelectionSet, v *storage.Interval) graphql.Marshaler {
	if v == nil {
		return graphql.Null
	}
	res := scalar.MarshalString(string(*v))
	return res
}

func (ec *executionContext) marshalNString2string(ctx context.Context, sel ast.SelectionSet, v string) graphql.Marshaler {
	res := scalar.MarshalString(v)
	return res
}

func (ec *executionContext) marshalNJobState2tillᚋgraphᚋmodelᚐJobState(ctx context.Context, sel ast.SelectionSet, v model.JobState) graphql.Marshaler {
	return v
}
`

func TestKindsOfNamedStringTypes(t *testing.T) {
	texts, err := stringCasts([]byte(generatedMarshallers))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		marshal, goType, want string
	}{
		{"ec.marshalNOrderStatus2tillᚋstorageᚐOrderStatus", "storage.OrderStatus", "text"},
		{"ec.marshalOInterval2ᚖtillᚋstorageᚐInterval", "*storage.Interval", "text"},
		{"ec.marshalNString2string", "string", "text"},
		{"ec.marshalNJobState2tillᚋgraphᚋmodelᚐJobState", "model.JobState", ""},
		{"ec.marshalNDateTime2timeᚐTime", "time.Time", "datetime"},
	} {
		if got := kindOf(tc.marshal, tc.goType, texts); got != tc.want {
			t.Errorf("kindOf(%s, %s) = %q, want %q", tc.marshal, tc.goType, got, tc.want)
		}
	}
	if len(texts) != 2 {
		t.Errorf("string casts %v, want the two enum marshallers", texts)
	}
}
