package resttest

import (
	"regexp"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// ECMAPattern compiles a contract pattern (ECMA-262, as pydantic writes them) for Go, whose
// RE2 has no lookahead. The contract's only lookahead is a leading negative one,
// "^(?!A)B", which matches what A does not match and "^B" does; every other pattern
// compiles as it is.
func ECMAPattern(expr string) (openapi3.RegexMatcher, error) {
	body, ok := strings.CutPrefix(expr, "^(?!")
	if !ok {
		return regexp.Compile(expr)
	}
	depth := 1
	for i, r := range body {
		switch r {
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				not, err := regexp.Compile(body[:i])
				if err != nil {
					return nil, err
				}
				yes, err := regexp.Compile("^" + body[i+1:])
				if err != nil {
					return nil, err
				}
				return lookahead{not: not, yes: yes}, nil
			}
		}
	}
	return regexp.Compile(expr)
}

// lookahead matches a string that yes matches and not does not.
type lookahead struct{ not, yes *regexp.Regexp }

func (l lookahead) MatchString(s string) bool { return !l.not.MatchString(s) && l.yes.MatchString(s) }
