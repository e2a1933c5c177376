package platformoperators

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestValidatePackageName(t *testing.T) {
	cases := []struct {
		name, pkg, want string
	}{
		{"simple", "cert-manager", ""},
		{"digits", "3scale-operator2", ""},
		{"one character", "a", ""},
		{"56 characters", strings.Repeat("a", 56), ""},
		{"empty", "", "spec.package.name: required"},
		{"57 characters", strings.Repeat("a", 57), `spec.package.name "` + strings.Repeat("a", 57) + `": longer than 56 characters (57)`},
		{"uppercase", "Cert-Manager", `spec.package.name "Cert-Manager": must match [a-z0-9]([-a-z0-9]*[a-z0-9])? (lowercase letters, digits and '-', starting and ending with a letter or digit)`},
		{"dot", "cert.manager", `spec.package.name "cert.manager": must match [a-z0-9]([-a-z0-9]*[a-z0-9])? (lowercase letters, digits and '-', starting and ending with a letter or digit)`},
		{"leading dash", "-cert", `spec.package.name "-cert": must match [a-z0-9]([-a-z0-9]*[a-z0-9])? (lowercase letters, digits and '-', starting and ending with a letter or digit)`},
		{"trailing dash", "cert-", `spec.package.name "cert-": must match [a-z0-9]([-a-z0-9]*[a-z0-9])? (lowercase letters, digits and '-', starting and ending with a letter or digit)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidatePackageName(tc.pkg)
			got := ""
			if err != nil {
				got = err.Error()
				var fe *FieldError
				if !errors.As(err, &fe) || fe.Field != "spec.package.name" {
					t.Errorf("error %T %v: want a *FieldError for spec.package.name", err, err)
				}
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestDecodePlatformOperator(t *testing.T) {
	po := func(edit func(m map[string]any)) map[string]any {
		m := map[string]any{
			"apiVersion": "platform.openshift.io/v1alpha1",
			"kind":       "PlatformOperator",
			"metadata":   map[string]any{"name": "cert-manager"},
			"spec":       map[string]any{"package": map[string]any{"name": "openshift-cert-manager-operator"}},
		}
		if edit != nil {
			edit(m)
		}
		return m
	}
	cases := []struct {
		name string
		obj  map[string]any
		want []string
	}{
		{name: "valid", obj: po(nil)},
		{name: "no spec", obj: po(func(m map[string]any) { delete(m, "spec") }), want: []string{"spec.package.name: required"}},
		{name: "bad package and namespace", obj: po(func(m map[string]any) {
			m["metadata"] = map[string]any{"name": "x", "namespace": "default"}
			m["spec"] = map[string]any{"package": map[string]any{"name": "Bad_Name"}}
		}), want: []string{
			`metadata.namespace "default": must be empty: PlatformOperator is cluster-scoped`,
			`spec.package.name "Bad_Name": must match [a-z0-9]([-a-z0-9]*[a-z0-9])? (lowercase letters, digits and '-', starting and ending with a letter or digit)`,
		}},
		{name: "other version", obj: po(func(m map[string]any) { m["apiVersion"] = "platform.openshift.io/v1" }),
			want: []string{`apiVersion "platform.openshift.io/v1": want platform.openshift.io/v1alpha1`}},
		{name: "bad name", obj: po(func(m map[string]any) { m["metadata"] = map[string]any{"name": "Cert_Manager"} }),
			want: []string{`metadata.name "Cert_Manager": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`}},
		{name: "unknown field", obj: po(func(m map[string]any) { m["spec"] = map[string]any{"packageName": "x"} }),
			want: []string{`(object): strict decoding error: unknown field "spec.packageName"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodePlatformOperator(tc.obj)
			var msgs []string
			if err != nil {
				msgs = strings.Split(err.Error(), "\n")
			} else if got.Name != "cert-manager" || got.Spec.Package.Name != "openshift-cert-manager-operator" {
				t.Errorf("decoded %+v", got)
			}
			if diff := cmp.Diff(tc.want, msgs); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}
