package platformoperators

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestValidatePackageName: the API server (the CRD's unanchored pattern)
// and ValidatePackageName (the whole name a DNS label) side by side.
func TestValidatePackageName(t *testing.T) {
	const label = "must be a lowercase DNS label: letters, digits and '-', starting and ending with a letter or digit (^[a-z0-9]([-a-z0-9]*[a-z0-9])?$)"
	const unanchored = "; the API server accepts it only because the CRD's pattern is unanchored"
	cases := []struct {
		name, pkg string
		crd       bool   // the API server accepts it
		want      string // our error, "" for none
	}{
		{"simple", "cert-manager", true, ""},
		{"digits", "3scale-operator2", true, ""},
		{"one character", "a", true, ""},
		{"56 characters", strings.Repeat("a", 56), true, ""},
		{"empty", "", false, "spec.package.name: required"},
		{"57 characters", strings.Repeat("a", 57), false, `spec.package.name "` + strings.Repeat("a", 57) + `": longer than 56 characters (57)`},
		{"uppercase", "Cert-Manager", true, `spec.package.name "Cert-Manager": ` + label + unanchored},
		{"dot", "cert.manager", true, `spec.package.name "cert.manager": ` + label + unanchored},
		{"leading dash", "-cert", true, `spec.package.name "-cert": ` + label + unanchored},
		{"trailing dash", "cert-", true, `spec.package.name "cert-": ` + label + unanchored},
		{"underscore", "cert_manager", true, `spec.package.name "cert_manager": ` + label + unanchored},
		{"no lowercase letter or digit", "CERT-MANAGER", false, `spec.package.name "CERT-MANAGER": ` + label},
		{"only a dash", "-", false, `spec.package.name "-": ` + label},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := CRDAcceptsPackageName(tc.pkg); got != tc.crd {
				t.Errorf("CRDAcceptsPackageName = %v, want %v", got, tc.crd)
			}
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
			if err == nil && !tc.crd {
				t.Error("we accept a name the API server rejects")
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
			`spec.package.name "Bad_Name": must be a lowercase DNS label: letters, digits and '-', starting and ending with a letter or digit (^[a-z0-9]([-a-z0-9]*[a-z0-9])?$); the API server accepts it only because the CRD's pattern is unanchored`,
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
