package storage_test

import (
	"database/sql/driver"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"

	"till/storage"
)

// updateCases pairs each update struct with the record that reads its table, whose db tags
// name the columns by the same Go field names.
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
}

func TestUpdateStructsWriteOnlyTheColumnsTheyDeclare(t *testing.T) {
	t.Parallel()
	for _, tc := range updateCases {
		t.Run("a zero "+tc.name+" update writes no column", func(t *testing.T) {
			if got := storage.Assigned(tc.update); len(got) != 0 {
				t.Errorf("zero update writes %v", got)
			}
		})
		t.Run("each field of a "+tc.name+" update is the column its record reads", func(t *testing.T) {
			ut, rt := reflect.TypeOf(tc.update), reflect.TypeOf(tc.record)
			var want []string
			for i := range ut.NumField() {
				f, ok := rt.FieldByName(ut.Field(i).Name)
				if !ok {
					t.Fatalf("%s has no field %s", rt.Name(), ut.Field(i).Name)
				}
				want = append(want, f.Tag.Get("db"))
			}
			if diff := cmp.Diff(want, storage.Declared(tc.update)); diff != "" {
				t.Errorf("declared columns (-want +got):\n%s", diff)
			}
		})
		t.Run("setting one field of a "+tc.name+" update writes its column alone, a nil one as NULL", func(t *testing.T) {
			declared := storage.Declared(tc.update)
			for i := range reflect.TypeOf(tc.update).NumField() {
				u := reflect.New(reflect.TypeOf(tc.update)).Elem()
				f := u.Field(i)
				f.Set(f.MethodByName("Touched").Call(nil)[0])
				got := storage.Assigned(u.Interface().(storage.Update))
				if len(got) != 1 || got[0].Column != declared[i] {
					t.Errorf("setting %s writes %v, want %s alone", u.Type().Field(i).Name, got, declared[i])
					continue
				}
				if f.MethodByName("Get").Type().Out(0).Kind() == reflect.Pointer {
					if v := driverValue(t, got[0].Value); v != nil {
						t.Errorf("setting %s to nil writes %v, want NULL", u.Type().Field(i).Name, v)
					}
				}
			}
		})
	}
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
