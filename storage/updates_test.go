package storage_test

import (
	"database/sql/driver"
	"reflect"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"till/storage"
)

// updateCases pairs each update struct (and the checkout insert) with the record that reads
// its table, whose db tags name the columns by the same Go field names.
var updateCases = []struct {
	name   string
	update storage.Update
	record any
}{
	{"product", storage.ProductUpdate{}, storage.Product{}},
	{"benefit", storage.BenefitUpdate{}, storage.Benefit{}},
	{"meter", storage.MeterUpdate{}, storage.Meter{}},
	{"file", storage.FileUpdate{}, storage.StoredFile{}},
	{"webhook endpoint", storage.WebhookEndpointUpdate{}, storage.WebhookEndpoint{}},
	{"OAuth2 client", storage.OAuth2ClientUpdate{}, storage.OAuth2Client{}},
	{"customer", storage.CustomerUpdate{}, storage.Customer{}},
	{"order", storage.OrderUpdate{}, storage.Order{}},
	{"subscription", storage.SubscriptionUpdate{}, storage.Subscription{}},
	{"checkout", storage.CheckoutUpdate{}, storage.Checkout{}},
	{"new checkout", storage.CheckoutWrite{}, storage.Checkout{}},
}

func TestUpdateStructsWriteOnlyTheColumnsTheyDeclare(t *testing.T) {
	t.Parallel()
	for _, tc := range updateCases {
		fields := columnFields(reflect.TypeOf(tc.update))
		var declared, always []string
		for _, f := range fields {
			rf, ok := reflect.TypeOf(tc.record).FieldByName(f.Name)
			if !ok {
				t.Fatalf("%T has no field %s", tc.record, f.Name)
			}
			declared = append(declared, rf.Tag.Get("db"))
			if !isOmittable(f.Type) {
				always = append(always, rf.Tag.Get("db"))
			}
		}
		t.Run("each field of a "+tc.name+" update is the column its record reads", func(t *testing.T) {
			if diff := cmp.Diff(declared, storage.Declared(tc.update)); diff != "" {
				t.Errorf("declared columns (-want +got):\n%s", diff)
			}
		})
		t.Run("a zero "+tc.name+" update writes only the columns that are not optional", func(t *testing.T) {
			if diff := cmp.Diff(always, columnsOf(storage.Assigned(tc.update))); diff != "" {
				t.Errorf("zero update writes (-want +got):\n%s", diff)
			}
		})
		t.Run("setting one field of a "+tc.name+" update writes its column alone, a nil one as NULL", func(t *testing.T) {
			for i, f := range fields {
				if !isOmittable(f.Type) {
					continue
				}
				u := reflect.New(reflect.TypeOf(tc.update)).Elem()
				v := u.FieldByIndex(f.Index)
				v.Set(v.MethodByName("Touched").Call(nil)[0])
				got := storage.Assigned(u.Interface().(storage.Update))
				extra := slices.DeleteFunc(slices.Clone(got), func(a storage.Assignment) bool { return slices.Contains(always, a.Column) })
				if len(extra) != 1 || extra[0].Column != declared[i] {
					t.Errorf("setting %s writes %v, want %s alone", f.Name, columnsOf(extra), declared[i])
					continue
				}
				if v.MethodByName("Get").Type().Out(0).Kind() == reflect.Pointer {
					if dv := driverValue(t, extra[0].Value); dv != nil {
						t.Errorf("setting %s to nil writes %v, want NULL", f.Name, dv)
					}
				}
			}
		})
	}
}

// columnFields lists the fields of an update struct that name columns, in order: its own and
// those of an embedded update, not the embedded struct itself.
func columnFields(t reflect.Type) []reflect.StructField {
	var out []reflect.StructField
	for _, f := range reflect.VisibleFields(t) {
		if !f.Anonymous {
			out = append(out, f)
		}
	}
	return out
}

// isOmittable tells an optional field (storage.Omittable) from one every write carries.
func isOmittable(t reflect.Type) bool {
	_, ok := t.MethodByName("Touched")
	return ok
}

func columnsOf(as []storage.Assignment) []string {
	var out []string
	for _, a := range as {
		out = append(out, a.Column)
	}
	return out
}

// driverValue is what database/sql hands the driver for v.
func driverValue(t *testing.T, v any) driver.Value {
	t.Helper()
	out, err := driver.DefaultParameterConverter.ConvertValue(v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
