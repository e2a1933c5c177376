package apicheck

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

// checkGeneric is manifest.CheckObject as problems: what the server
// checks of any object before its type's own rules.
func checkGeneric(obj map[string]any) []Problem {
	var out []Problem
	for _, e := range manifest.CheckObject(obj) {
		out = append(out, Problem{Field: e.Field, Message: e.Message, Severity: Error})
	}
	return out
}

// appendFieldErrors adds the server's field errors as problems.
func appendFieldErrors(out []Problem, errs field.ErrorList) []Problem {
	for _, e := range errs {
		out = append(out, problemOf(e, Error))
	}
	return out
}

// problemOf turns a field error into a Problem: its path, and its message
// without the path the error repeats.
func problemOf(e *field.Error, sev Severity) Problem {
	msg := strings.TrimPrefix(e.Error(), e.Field+": ")
	return Problem{Field: strings.TrimPrefix(e.Field, "<nil>."), Message: msg, Severity: sev}
}
