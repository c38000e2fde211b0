package fastapi

import "fmt"

// Date is a date (pydantic's date) written YYYY-MM-DD, as upstream's start_date and
// end_date parameters take it. The variable is the date in that form.
type Date struct{}

func (Date) validatorName() string { return "date" }

func (Date) validate(in any, loc []any) (outcome, []ValidationError) {
	s, isStr := in.(string)
	if !isStr {
		return fail(newError("date_type", loc, "Input should be a valid date", in))
	}
	y, m, d, errText := parseSpeedateDate(s)
	if errText == "" && len(s) != 10 {
		errText = "unexpected extra characters at the end of the input"
	}
	if errText != "" {
		return fail(newError("date_from_datetime_parsing", loc, "Input should be a valid date or datetime, "+errText, in,
			"error", errText))
	}
	return ok(fmt.Sprintf("%04d-%02d-%02d", y, m, d), lax)
}
