package apicheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	sigsjson "sigs.k8s.io/json"
)

// typeErrorRE takes the field path and the type out of a JSON type error:
// "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32".
var typeErrorRE = regexp.MustCompile(`^json: cannot unmarshal (.+) into Go struct field [A-Za-z0-9_]+\.(\S+) of type (\S+)$`)

// checkBuiltin decodes an object of a built-in kind into its Go type the
// way the API server decodes a request body (sigs.k8s.io/json, strict):
// a value of the wrong type (a string where a number goes) is an error
// naming the field; what a type refuses itself (a quantity such as "2
// cores") is an error naming the kind; a field the type does not have is
// a warning, because apply drops it, as the CVO does (the server would
// drop it with a warning, or refuse it when asked to be strict). Kinds
// that are not built in get nothing.
func checkBuiltin(u *unstructured.Unstructured) []Problem {
	gvk := u.GroupVersionKind()
	t, err := clientgoscheme.Scheme.New(gvk)
	if err != nil {
		return nil
	}
	data, err := json.Marshal(u.Object)
	if err != nil {
		return []Problem{{Message: fmt.Sprintf("does not encode as JSON: %v", err), Severity: Error}}
	}
	strict, err := sigsjson.UnmarshalStrict(data, t, sigsjson.DisallowUnknownFields)
	var out []Problem
	if err != nil {
		if m := typeErrorRE.FindStringSubmatch(err.Error()); m != nil {
			out = append(out, Problem{Field: m[2], Message: fmt.Sprintf("must be of type %s, not %s", m[3], m[1]), Severity: Error})
		} else {
			out = append(out, Problem{Message: fmt.Sprintf("does not decode as %s: %v", gvk.Kind, err), Severity: Error})
		}
	}
	for _, e := range strict {
		field := e.Error()
		var fe sigsjson.FieldError
		if errors.As(e, &fe) {
			field = fe.FieldPath()
		}
		field = strings.Trim(strings.TrimPrefix(field, "unknown field "), `"`)
		out = append(out, Problem{Field: field, Message: "field not declared in the " + gvk.Kind + " type: apply drops it (as the CVO does)", Severity: Warning})
	}
	return out
}
