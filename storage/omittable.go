package storage

import (
	"fmt"
	"strings"
)

// Omittable is one field of an update struct (ProductUpdate, CustomerUpdate, …). Updates
// follow PATCH semantics, where a field the caller leaves out and a field it sets to null
// mean different things: the zero Omittable leaves its column as it is, while Set(v) writes
// v, and a nil pointer set this way writes NULL. Only the update struct names the column, so
// use cases change rows through Go fields and never spell a column themselves.
type Omittable[T any] struct {
	value T
	set   bool
}

// Set is an Omittable that writes v. The column receives v as the driver writes it: a nil
// pointer is NULL, and a type with its own Value (JSONMap, RawJSON) decides for itself.
func Set[T any](v T) Omittable[T] { return Omittable[T]{value: v, set: true} }

// Get returns the value and whether it is set, for use cases that decide on what an update
// already holds (for example whether it changes an address).
func (o Omittable[T]) Get() (T, bool) { return o.value, o.set }

// IsSet reports whether the field writes its column.
func (o Omittable[T]) IsSet() bool { return o.set }

// to is the field's assignment to column.
func (o Omittable[T]) to(column string) assignment {
	return assignment{column: column, value: o.value, set: o.set}
}

// mapped is to for a field whose value the driver needs in another form (a list as
// pq.Array, for example).
func mapped[T any](o Omittable[T], column string, f func(T) any) assignment {
	a := assignment{column: column, set: o.set}
	if o.set {
		a.value = f(o.value)
	}
	return a
}

// assignment is one column of a table an update struct declares, with the value it writes
// when set.
type assignment struct {
	column string
	value  any
	set    bool
}

// update is what every update struct provides: the columns it declares, in field order,
// set or not. The list is the whole whitelist of what an update of that table may write.
type update interface {
	assignments() []assignment
}

// isZero reports whether an update writes no column.
func isZero(u update) bool {
	for _, a := range u.assignments() {
		if a.set {
			return false
		}
	}
	return true
}

// insertLists renders the column list and the parameter list of an INSERT of the set fields
// of u, with their values.
func insertLists(u update) (columns, params string, args []any) {
	var cols, marks []string
	for _, a := range u.assignments() {
		if !a.set {
			continue
		}
		args = append(args, a.value)
		cols, marks = append(cols, a.column), append(marks, fmt.Sprintf("$%d", len(args)))
	}
	return strings.Join(cols, ", "), strings.Join(marks, ", "), args
}

// setClause renders "modified, column = $n, …" for the set fields of u, numbering the
// parameters after the leading args it is given and returning them extended with the values.
// modified is the caller's modified_at assignment: most tables are stamped with the
// database's now(); orders and subscriptions with the use case's clock ("modified_at = $2"),
// as a test clock may run ahead of the database's.
func setClause(modified string, u update, args []any) (string, []any) {
	sets := []string{modified}
	for _, a := range u.assignments() {
		if !a.set {
			continue
		}
		args = append(args, a.value)
		sets = append(sets, fmt.Sprintf("%s = $%d", a.column, len(args)))
	}
	return strings.Join(sets, ", "), args
}
