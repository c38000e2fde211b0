package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/printer"
	"go/token"
	"sort"
	"strings"
)

// A plain field is one gqlgen resolves by reading a struct field of the object, or calling a
// method of it that takes nothing and cannot fail (no resolver, no directive), and writes
// with a scalar or enum marshaller. For such a field the
// executor's per-field machinery (a field context, a middleware chain, a deferred recover)
// produces exactly what calling the marshaller on the struct field produces, and on a page
// of objects that machinery is most of the cost. addPlainWriters gives every object type
// with plain fields an `_<Type>__plain` method that writes an object whose selected fields
// are all plain in one pass, with the same marshallers and the same bytes, and makes the
// object's executor try it first. Anything else selected (a resolver, a relation, a
// directive, a deferred fragment, a null in a non-null field) leaves the object to gqlgen.
// Every object executor, with plain fields or of a pointer, first asks gqlexec.RenderedOf
// whether the object carries the JSON PostgreSQL wrote for its selection.

// plainField is a plain field of an object: its GraphQL name, the Go expression that reads
// it from obj, the marshaller gqlgen calls for it, and whether a nil value would be an error
// (a non-null field held in a pointer).
type plainField struct {
	name, expr, marshal string
	nilIsError          bool
	// method is set for a getter method: it reads fields nobody can name, so the field is
	// written but not listed in the table of struct fields (plainTable).
	method bool
	// kind is how PostgreSQL can write the value exactly as the marshaller does (see
	// kindOf), or "" when it cannot.
	kind string
}

// plainObject is an object type's executor function and its plain fields.
type plainObject struct {
	typeName string
	objType  string // the Go type of obj, as the executor function spells it
	pointer  bool
	hookAt   int // offset just after the CollectFields statement of the executor function
	startAt  int // offset of that statement, where the rendered-JSON hook goes
	endAt    int // offset of the end of the executor function's body
	fields   []plainField
}

const plainSuffix = "__plain"

// addPlainWriters returns src with the plain writers of its object types appended and the
// hooks in place, and the objects it found; a file that already has them, or has no object
// with plain fields, comes back unchanged.
func addPlainWriters(src []byte, texts map[string]bool) ([]byte, []plainObject, error) {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "", src, parser.SkipObjectResolution)
	if err != nil {
		return nil, nil, err
	}
	objects := plainObjects(fset, file, src, texts)
	if len(objects) == 0 || bytes.Contains(src, []byte(plainSuffix+"(")) || bytes.Contains(src, []byte("gqlexec.RenderedOf(")) {
		return src, withPlainFields(objects), nil
	}
	var out bytes.Buffer
	last := 0
	for _, o := range objects { // in source order of their hooks
		out.Write(src[last:o.startAt])
		if o.pointer {
			out.WriteString("if obj != nil {\n\t\tif m := gqlexec.RenderedOf(obj); m != nil {\n\t\t\treturn m\n\t\t}\n\t}\n\t")
		} else {
			out.WriteString("if m := gqlexec.RenderedOf(obj); m != nil {\n\t\treturn m\n\t}\n\t")
		}
		if len(o.fields) == 0 { // the hook alone: a record that carries its JSON (storage.Me)
			last = o.startAt
			continue
		}
		out.Write(src[o.startAt:o.hookAt])
		fmt.Fprintf(&out, "\n\tif m := ec._%s%s(ctx, fields, obj); m != nil {\n\t\treturn m\n\t}\n", o.typeName, plainSuffix)
		out.Write(directPlainFields(src[o.hookAt:o.endAt], o))
		last = o.endAt
	}
	out.Write(src[last:])
	objects = withPlainFields(objects)
	for _, o := range objects {
		writePlainObject(&out, o)
	}
	formatted, err := addImport(out.Bytes(), importPath)
	if err == nil && len(objects) > 0 {
		formatted, err = addImport(formatted, `"io"`)
	}
	return formatted, objects, err
}

// directPlainFields rewrites the executor function's field switch (body) so that each plain
// field of an object that is not all plain is written by its marshaller straight from the
// struct, as the plain writer writes it, instead of through graphql.ResolveField: an
// order page's order has forty plain fields beside its relations. A field whose nil would
// be an error keeps the executor's path, which reports it.
func directPlainFields(body []byte, o plainObject) []byte {
	for _, f := range o.fields {
		if f.nilIsError {
			continue
		}
		call := fmt.Sprintf("ec._%s_%s(ctx, field, obj)", o.typeName, f.name)
		direct := fmt.Sprintf("%s(ctx, field.Selections, %s)", f.marshal, f.expr)
		body = bytes.ReplaceAll(body, []byte(call), []byte(direct))
	}
	return body
}

// plainTable is the Go file that lists every object's plain fields and the struct field each
// reads, for resolvers that read only the columns a selection needs.
func plainTable(pkg string, objects []plainObject) ([]byte, error) {
	sort.Slice(objects, func(i, j int) bool { return objects[i].typeName < objects[j].typeName })
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by till/internal/gqlexec/rewrite. DO NOT EDIT.\n\npackage %s\n\n", pkg)
	b.WriteString("// PlainObject is an object type's Go type (as Go source spells it) and its plain fields:\n" +
		"// those the executor resolves by reading a struct field, with the Go path of that field.\n" +
		"// Kinds says, for the fields PostgreSQL can write exactly as the marshaller does, how:\n" +
		"// datetime, number, boolean, uuid or text. Getters are the plain fields read through a method\n" +
		"// of the object that takes nothing, with the method's name.\n" +
		"type PlainObject struct {\n\tGoType  string\n\tFields  map[string]string\n\tKinds   map[string]string\n\tGetters map[string]string\n}\n\n")
	b.WriteString("// PlainFields are the plain fields of every object type that has some.\n")
	b.WriteString("var PlainFields = map[string]PlainObject{\n")
	for _, o := range objects {
		fmt.Fprintf(&b, "\t%q: {GoType: %q, Fields: map[string]string{", o.typeName, o.objType)
		sep := ""
		for _, f := range o.fields {
			if !f.method {
				fmt.Fprintf(&b, "%s%q: %q", sep, f.name, strings.TrimPrefix(f.expr, "obj."))
				sep = ", "
			}
		}
		b.WriteString("}, Kinds: map[string]string{")
		sep = ""
		for _, f := range o.fields {
			if !f.method && f.kind != "" {
				fmt.Fprintf(&b, "%s%q: %q", sep, f.name, f.kind)
				sep = ", "
			}
		}
		b.WriteString("}, Getters: map[string]string{")
		sep = ""
		for _, f := range o.fields {
			if f.method {
				fmt.Fprintf(&b, "%s%q: %q", sep, f.name, strings.TrimSuffix(strings.TrimPrefix(f.expr, "obj."), "()"))
				sep = ", "
			}
		}
		b.WriteString("}},\n")
	}
	b.WriteString("}\n")
	return format.Source(b.Bytes())
}

// plainObjects finds the object executor functions of file and their plain fields, sorted
// by the position of their hooks: those with plain fields, and those of a pointer, which
// may carry the JSON PostgreSQL wrote (gqlexec.RenderedOf) even with none.
func plainObjects(fset *token.FileSet, file *ast.File, src []byte, texts map[string]bool) []plainObject {
	funcs := map[string]*ast.FuncDecl{}
	for _, d := range file.Decls {
		if f, ok := d.(*ast.FuncDecl); ok && f.Recv != nil {
			funcs[f.Name.Name] = f
		}
	}
	var objects []plainObject
	for name, f := range funcs {
		typeName, ok := strings.CutPrefix(name, "_")
		if !ok || strings.Contains(typeName, "_") {
			continue
		}
		o, ok := objectFunc(fset, f, typeName, src)
		if !ok {
			continue
		}
		prefix := name + "_"
		var names []string
		for fn := range funcs {
			if field, ok := strings.CutPrefix(fn, prefix); ok && !strings.Contains(field, "_") {
				names = append(names, field)
			}
		}
		sort.Strings(names)
		for _, field := range names {
			if p, ok := plainOf(fset, funcs, typeName, field, src, texts); ok {
				o.fields = append(o.fields, p)
			}
		}
		if len(o.fields) > 0 || o.pointer {
			objects = append(objects, o)
		}
	}
	sort.Slice(objects, func(i, j int) bool { return objects[i].hookAt < objects[j].hookAt })
	return objects
}

// withPlainFields are the objects of objects that have plain fields.
func withPlainFields(objects []plainObject) []plainObject {
	var out []plainObject
	for _, o := range objects {
		if len(o.fields) > 0 {
			out = append(out, o)
		}
	}
	return out
}

// objectFunc recognises `func (ec *executionContext) _T(ctx context.Context, sel
// ast.SelectionSet, obj X) graphql.Marshaler` whose first statement collects the fields.
func objectFunc(fset *token.FileSet, f *ast.FuncDecl, typeName string, src []byte) (plainObject, bool) {
	params := f.Type.Params.List
	if len(params) != 3 || len(f.Body.List) == 0 || names(params[2]) != "obj" || names(params[1]) != "sel" {
		return plainObject{}, false
	}
	first, ok := f.Body.List[0].(*ast.AssignStmt)
	if !ok || len(first.Lhs) != 1 || exprString(fset, first.Lhs[0]) != "fields" ||
		!strings.HasPrefix(exprString(fset, first.Rhs[0]), "graphql.CollectFields(") &&
			!strings.HasPrefix(exprString(fset, first.Rhs[0]), "gqlexec.CollectFields(") {
		return plainObject{}, false
	}
	_, pointer := params[2].Type.(*ast.StarExpr)
	return plainObject{typeName: typeName, objType: exprString(fset, params[2].Type), pointer: pointer,
		hookAt: fset.Position(first.End()).Offset, startAt: fset.Position(first.Pos()).Offset,
		endAt: fset.Position(f.Body.End()).Offset}, true
}

// plainOf reads the field function _T_field: a plain field's is
//
//	return graphql.ResolveField(ctx, ec.OperationContext, field,
//		func(...) { return ec.fieldContext_T_field(ctx, field) },  // a scalar field context
//		func(ctx context.Context) (any, error) { return obj.X, nil },
//		nil,                                                        // no directive
//		func(ctx context.Context, selections ast.SelectionSet, v V) graphql.Marshaler {
//			return ec.marshalV(ctx, selections, v)
//		},
//		true, nonNull)
func plainOf(fset *token.FileSet, funcs map[string]*ast.FuncDecl, typeName, field string, src []byte,
	texts map[string]bool) (plainField, bool) {
	f := funcs["_"+typeName+"_"+field]
	call, ok := onlyReturn(f.Body).(*ast.CallExpr)
	if !ok || exprString(fset, call.Fun) != "graphql.ResolveField" || len(call.Args) != 9 {
		return plainField{}, false
	}
	if id, ok := call.Args[5].(*ast.Ident); !ok || id.Name != "nil" {
		return plainField{}, false // a directive
	}
	fcName := "fieldContext_" + typeName + "_" + field
	if !strings.HasPrefix(exprString(fset, litReturn(call.Args[3])), "ec."+fcName+"(") ||
		funcs[fcName] == nil || !strings.HasPrefix(exprString(fset, onlyReturn(funcs[fcName].Body)), "graphql.NewScalarFieldContext(") {
		return plainField{}, false
	}
	res, ok := call.Args[4].(*ast.FuncLit)
	if !ok || len(res.Body.List) != 1 {
		return plainField{}, false
	}
	ret, ok := res.Body.List[0].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 2 || exprString(fset, ret.Results[1]) != "nil" {
		return plainField{}, false
	}
	value, method := ret.Results[0], false
	if call, ok := value.(*ast.CallExpr); ok && len(call.Args) == 0 {
		value, method = call.Fun, true
	}
	if !readsObj(value) {
		return plainField{}, false
	}
	mlit, ok := call.Args[6].(*ast.FuncLit)
	if !ok || len(mlit.Type.Params.List) != 3 {
		return plainField{}, false
	}
	mcall, ok := litReturn(mlit).(*ast.CallExpr)
	if !ok || !strings.HasPrefix(exprString(fset, mcall.Fun), "ec.marshal") {
		return plainField{}, false
	}
	vType := mlit.Type.Params.List[2].Type
	if _, isList := vType.(*ast.ArrayType); isList {
		return plainField{}, false
	}
	_, isPointer := vType.(*ast.StarExpr)
	nonNull := exprString(fset, call.Args[8]) == "true"
	marshal := exprString(fset, mcall.Fun)
	return plainField{name: field, expr: exprString(fset, ret.Results[0]), marshal: marshal,
		nilIsError: isPointer && nonNull, method: method, kind: kindOf(marshal, exprString(fset, vType), texts)}, true
}

// kindOf classifies a plain field by its marshaller (ec.marshal{N,O}<GraphQL type>2<Go
// type>) and Go type, for writing it in SQL: "datetime", "number", "boolean", "text" (ids,
// strings, and enums held as strings or as named string types, whose marshallers are in
// texts), "uuid", or "" for anything else (JSON, floats, amounts of other shapes), which only
// Go writes.
func kindOf(marshal, goType string, texts map[string]bool) string {
	name := strings.TrimPrefix(strings.TrimPrefix(marshal, "ec.marshalN"), "ec.marshalO")
	name, _, _ = strings.Cut(name, "2")
	base := strings.TrimPrefix(goType, "*")
	switch {
	case name == "DateTime" && base == "time.Time":
		return "datetime"
	case (name == "Int" || name == "Int64" || name == "Int32") && (base == "int" || base == "int64" || base == "int32"):
		return "number"
	case name == "Boolean" && base == "bool":
		return "boolean"
	case (name == "UUID" || name == "ID") && base == "uuid.UUID":
		return "uuid"
	case base == "string" && name != "JSON" && name != "Metadata", texts[marshal]:
		return "text"
	}
	return ""
}

// readsObj reports whether e is obj or a chain of field selections from it (no calls).
func readsObj(e ast.Expr) bool {
	for {
		switch x := e.(type) {
		case *ast.Ident:
			return x.Name == "obj"
		case *ast.SelectorExpr:
			e = x.X
		default:
			return false
		}
	}
}

// onlyReturn is the expression of a body that is a single return of one value.
func onlyReturn(body *ast.BlockStmt) ast.Expr {
	if body == nil || len(body.List) != 1 {
		return nil
	}
	ret, ok := body.List[0].(*ast.ReturnStmt)
	if !ok || len(ret.Results) == 0 {
		return nil
	}
	return ret.Results[0]
}

// litReturn is onlyReturn of a function literal.
func litReturn(e ast.Expr) ast.Expr {
	lit, ok := e.(*ast.FuncLit)
	if !ok {
		return nil
	}
	return onlyReturn(lit.Body)
}

func names(f *ast.Field) string {
	if len(f.Names) != 1 {
		return ""
	}
	return f.Names[0].Name
}

func exprString(fset *token.FileSet, e ast.Expr) string {
	if e == nil {
		return ""
	}
	var b bytes.Buffer
	_ = printer.Fprint(&b, fset, e)
	return b.String()
}

// writePlainObject appends o's plain writer: it declines (nil) unless every collected field
// is plain and holds a value its marshaller writes without an error, and otherwise writes
// the object as graphql.FieldSet would.
func writePlainObject(out *bytes.Buffer, o plainObject) {
	fmt.Fprintf(out, "\n// _%[1]s%[2]s writes a %[1]s whose selected fields are all plain struct fields, with\n"+
		"// the marshallers the executor would call; nil leaves the object to the executor.\n", o.typeName, plainSuffix)
	fmt.Fprintf(out, "func (ec *executionContext) _%s%s(ctx context.Context, fields []graphql.CollectedField, obj %s) graphql.Marshaler {\n",
		o.typeName, plainSuffix, o.objType)
	if o.pointer {
		out.WriteString("\tif obj == nil {\n\t\treturn nil\n\t}\n")
	}
	out.WriteString("\tfor _, f := range fields {\n\t\tif f.IsDeferred() {\n\t\t\treturn nil\n\t\t}\n\t\tswitch f.Name {\n")
	var plain []string
	for _, f := range o.fields {
		if f.nilIsError {
			fmt.Fprintf(out, "\t\tcase %q:\n\t\t\tif %s == nil {\n\t\t\t\treturn nil\n\t\t\t}\n", f.name, f.expr)
			continue
		}
		plain = append(plain, fmt.Sprintf("%q", f.name))
	}
	fmt.Fprintf(out, "\t\tcase %s:\n\t\tdefault:\n\t\t\treturn nil\n\t\t}\n\t}\n", strings.Join(append([]string{`"__typename"`}, plain...), ", "))
	out.WriteString("\treturn graphql.WriterFunc(func(w io.Writer) {\n\t\t_, _ = io.WriteString(w, \"{\")\n" +
		"\t\tfor i, f := range fields {\n\t\t\tif i > 0 {\n\t\t\t\t_, _ = io.WriteString(w, \",\")\n\t\t\t}\n" +
		"\t\t\tgraphql.MarshalString(f.Alias).MarshalGQL(w)\n\t\t\t_, _ = io.WriteString(w, \":\")\n\t\t\tswitch f.Name {\n")
	fmt.Fprintf(out, "\t\t\tcase \"__typename\":\n\t\t\t\tgraphql.MarshalString(%q).MarshalGQL(w)\n", o.typeName)
	for _, f := range o.fields {
		fmt.Fprintf(out, "\t\t\tcase %q:\n\t\t\t\t%s(ctx, f.Selections, %s).MarshalGQL(w)\n", f.name, f.marshal, f.expr)
	}
	out.WriteString("\t\t\t}\n\t\t}\n\t\t_, _ = io.WriteString(w, \"}\")\n\t})\n}\n")
}

// stringCasts names the marshallers of the generated files (as plainOf spells them,
// "ec.marshalNOrderStatus2…") that write a named string type as the string it holds: gqlgen
// casts such a type (an enum bound to storage.OrderStatus) and calls the String marshaller,
// so PostgreSQL writes it as it writes text.
func stringCasts(srcs ...[]byte) (map[string]bool, error) {
	out := map[string]bool{}
	for _, src := range srcs {
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, "", src, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range file.Decls {
			f, ok := d.(*ast.FuncDecl)
			if !ok || f.Recv == nil || f.Body == nil || !strings.HasPrefix(f.Name.Name, "marshal") {
				continue
			}
			body := src[fset.Position(f.Body.Pos()).Offset:fset.Position(f.Body.End()).Offset]
			if bytes.Contains(body, []byte("MarshalString(string(v))")) ||
				bytes.Contains(body, []byte("MarshalString(string(*v))")) {
				out["ec."+f.Name.Name] = true
			}
		}
	}
	return out, nil
}
