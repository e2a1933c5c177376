package platformoperators

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// prop builds a bundle property.
func prop(t string, v any) Property {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return Property{Type: t, Value: raw}
}

// modes is olm.csv.metadata with the given install modes supported.
func modes(supported ...string) Property {
	type mode struct {
		Type      string `json:"type"`
		Supported bool   `json:"supported"`
	}
	var ms []mode
	for _, t := range []string{"OwnNamespace", "SingleNamespace", "MultiNamespace", AllNamespaces} {
		ms = append(ms, mode{t, slices.Contains(supported, t)})
	}
	return prop(PropertyCSVMetadata, map[string]any{"installModes": ms})
}

// object is an olm.bundle.object property holding obj.
func object(obj map[string]any) Property {
	raw, err := json.Marshal(obj)
	if err != nil {
		panic(err)
	}
	return prop(PropertyBundleObject, map[string]string{"data": base64.StdEncoding.EncodeToString(raw)})
}

// bdl is a bundle of package "pkg" at version v that passes every rule;
// edits change it.
func bdl(v string, edits ...func(*Bundle)) *Bundle {
	b := &Bundle{
		Name:     "pkg.v" + v,
		Package:  "pkg",
		Image:    "registry.example.com/pkg-bundle:v" + v,
		Channels: []string{"stable"},
		Properties: []Property{
			prop(PropertyPackage, map[string]string{"packageName": "pkg", "version": v}),
			modes(AllNamespaces),
		},
	}
	for _, e := range edits {
		e(b)
	}
	return b
}

func with(ps ...Property) func(*Bundle) {
	return func(b *Bundle) { b.Properties = append(b.Properties, ps...) }
}

func without(t string) func(*Bundle) {
	return func(b *Bundle) {
		var keep []Property
		for _, p := range b.Properties {
			if p.Type != t {
				keep = append(keep, p)
			}
		}
		b.Properties = keep
	}
}

func catalogOf(bundles ...*Bundle) *Catalog {
	c := &Catalog{Packages: map[string]*Package{}}
	for _, b := range bundles {
		p := c.Packages[b.Package]
		if p == nil {
			p = &Package{Name: b.Package}
			c.Packages[b.Package] = p
		}
		p.Bundles = append(p.Bundles, b)
	}
	return c
}

func TestSelectBundle(t *testing.T) {
	maxOCP := func(v any) Property { return prop(PropertyMaxOpenShiftVersion, v) }
	cases := []struct {
		name     string
		catalog  *Catalog
		pkg      string
		cluster  string
		want     string // picked bundle
		rejected []Rejection
		err      string
	}{
		{
			name:    "highest semver wins",
			catalog: catalogOf(bdl("1.2.0"), bdl("1.10.0"), bdl("1.9.9")),
			pkg:     "pkg", cluster: "4.22.0", want: "pkg.v1.10.0",
		},
		{
			name:    "release beats prerelease",
			catalog: catalogOf(bdl("2.0.0-rc.1"), bdl("2.0.0"), bdl("1.0.0")),
			pkg:     "pkg", cluster: "4.22.0", want: "pkg.v2.0.0",
		},
		{
			name:    "equal versions: smallest name",
			catalog: catalogOf(bdl("1.0.0+b", func(b *Bundle) { b.Name = "pkg.b" }), bdl("1.0.0+a", func(b *Bundle) { b.Name = "pkg.a" })),
			pkg:     "pkg", cluster: "4.22.0", want: "pkg.a",
		},
		{
			name: "package filter",
			catalog: catalogOf(bdl("1.0.0"), bdl("9.0.0", func(b *Bundle) {
				b.Package, b.Name = "other", "other.v9"
				b.Properties[0] = prop(PropertyPackage, map[string]string{"packageName": "other", "version": "9.0.0"})
			})),
			pkg: "pkg", cluster: "4.22.0", want: "pkg.v1.0.0",
		},
		{
			name:    "package not in the catalog",
			catalog: catalogOf(bdl("1.0.0")),
			pkg:     "nope", cluster: "4.22.0",
			err: `package "nope": not in the catalog`,
		},
		{
			name: "no catalog",
			pkg:  "pkg", cluster: "4.22.0",
			err: `package "pkg": no catalog given to source it from`,
		},
		{
			name: "version range: maxOpenShiftVersion below the cluster's minor",
			catalog: catalogOf(
				bdl("1.0.0", with(maxOCP("4.22"))),
				bdl("1.1.0", with(maxOCP("4.21"))),
				bdl("1.2.0", with(maxOCP("4.22.0"))),
				bdl("1.3.0", with(maxOCP("5.0"))),
				bdl("1.4.0", with(maxOCP("3.99"))),
			),
			pkg: "pkg", cluster: "4.22.7", want: "pkg.v1.3.0",
			rejected: []Rejection{
				{Bundle: "pkg.v1.1.0", Reasons: []string{"olm.maxOpenShiftVersion 4.21: below the cluster version 4.22"}},
				{Bundle: "pkg.v1.4.0", Reasons: []string{"olm.maxOpenShiftVersion 3.99: below the cluster version 4.22"}},
			},
		},
		{
			name:    "version range: patch of maxOpenShiftVersion does not matter, prerelease cluster counts as its minor",
			catalog: catalogOf(bdl("1.0.0", with(maxOCP("4.22.0")))),
			pkg:     "pkg", cluster: "4.22.3-ec.1", want: "pkg.v1.0.0",
		},
		{
			name:    "version range: a number keeps its digits (4.10 is not 4.1)",
			catalog: catalogOf(bdl("1.0.0", with(Property{Type: PropertyMaxOpenShiftVersion, Value: json.RawMessage(`4.10`)}))),
			pkg:     "pkg", cluster: "4.10.0", want: "pkg.v1.0.0",
		},
		{
			name:    "version range: from the CSV's olm.properties annotation",
			catalog: catalogOf(bdl("1.0.0", without(PropertyCSVMetadata), with(object(map[string]any{"kind": "ClusterServiceVersion", "metadata": map[string]any{"name": "pkg.v1.0.0", "annotations": map[string]any{"olm.properties": `[{"type":"olm.maxOpenShiftVersion","value":"4.21"}]`}}, "spec": map[string]any{"installModes": []any{map[string]any{"type": "AllNamespaces", "supported": true}}}})))),
			pkg:     "pkg", cluster: "4.22.0",
			err: `package "pkg": no installable bundle: pkg.v1.0.0: olm.maxOpenShiftVersion 4.21: below the cluster version 4.22`,
		},
		{
			name: "version range: invalid, repeated, unknown cluster version",
			catalog: catalogOf(
				bdl("1.0.0", with(maxOCP("four"))),
				bdl("1.1.0", with(maxOCP("4.22"), maxOCP("4.23"))),
				bdl("1.2.0", with(maxOCP(""))),
			),
			pkg: "pkg", cluster: "4.22.0", want: "pkg.v1.2.0",
			rejected: []Rejection{
				{Bundle: "pkg.v1.0.0", Reasons: []string{`olm.maxOpenShiftVersion "four": not a version`}},
				{Bundle: "pkg.v1.1.0", Reasons: []string{"2 olm.maxOpenShiftVersion properties, want at most one"}},
			},
		},
		{
			name:    "version range: unknown cluster version rejects bounded bundles only",
			catalog: catalogOf(bdl("1.0.0"), bdl("2.0.0", with(maxOCP("4.30")))),
			pkg:     "pkg", cluster: "", want: "pkg.v1.0.0",
			rejected: []Rejection{{Bundle: "pkg.v2.0.0", Reasons: []string{"olm.maxOpenShiftVersion 4.30: the cluster version is unknown"}}},
		},
		{
			name: "invalid versions",
			catalog: catalogOf(
				bdl("1.0.0"),
				bdl("v2.0.0"),
				bdl("2.1"),
				bdl("3.0.0", without(PropertyPackage)),
				bdl("4.0.0", with(prop(PropertyPackage, map[string]string{"packageName": "pkg", "version": "4.0.0"}))),
				bdl("5.0.0", func(b *Bundle) {
					b.Properties[0] = prop(PropertyPackage, map[string]string{"packageName": "else", "version": "5.0.0"})
				}),
			),
			pkg: "pkg", cluster: "4.22.0", want: "pkg.v1.0.0",
			rejected: []Rejection{
				{Bundle: "pkg.vv2.0.0", Reasons: []string{`version "v2.0.0": not semver: Invalid character(s) found in major number "v2"`}, Malformed: true},
				{Bundle: "pkg.v2.1", Reasons: []string{`version "2.1": not semver: No Major.Minor.Patch elements found`}, Malformed: true},
				{Bundle: "pkg.v3.0.0", Reasons: []string{"no olm.package property (package and version)"}},
				{Bundle: "pkg.v4.0.0", Reasons: []string{"2 olm.package properties, want one"}},
				{Bundle: "pkg.v5.0.0", Reasons: []string{`olm.package names package "else"`}},
			},
		},
		{
			name: "restrictions: AllNamespaces only",
			catalog: catalogOf(
				bdl("1.0.0", without(PropertyCSVMetadata), with(modes("OwnNamespace", AllNamespaces))),
				bdl("1.1.0", without(PropertyCSVMetadata), with(modes("OwnNamespace", "SingleNamespace"))),
				bdl("1.2.0", without(PropertyCSVMetadata)),
				bdl("0.9.0"),
			),
			pkg: "pkg", cluster: "4.22.0", want: "pkg.v0.9.0",
			rejected: []Rejection{
				{Bundle: "pkg.v1.0.0", Reasons: []string{"supports install modes other than AllNamespaces: OwnNamespace"}},
				{Bundle: "pkg.v1.1.0", Reasons: []string{"does not support the AllNamespaces install mode"}},
				{Bundle: "pkg.v1.2.0", Reasons: []string{"install modes unknown: no olm.csv.metadata and no ClusterServiceVersion in olm.bundle.object"}},
			},
		},
		{
			name: "restrictions: no dependencies",
			catalog: catalogOf(
				bdl("2.0.0", with(prop(PropertyPackageRequired, map[string]string{"packageName": "cert-manager", "versionRange": ">=1.0.0"}))),
				bdl("2.1.0", with(prop(PropertyGVKRequired, map[string]string{"group": "example.com", "version": "v1", "kind": "Widget"}))),
				bdl("2.2.0", with(prop(PropertyConstraint, map[string]any{"failureMessage": "x", "cel": map[string]string{"rule": "true"}}))),
				bdl("2.3.0", without(PropertyCSVMetadata), with(prop(PropertyCSVMetadata, map[string]any{
					"installModes":          []map[string]any{{"type": AllNamespaces, "supported": true}},
					"apiServiceDefinitions": map[string]any{"required": []map[string]string{{"group": "metrics.k8s.io", "version": "v1beta1", "kind": "PodMetrics"}}},
				}))),
				bdl("1.0.0"),
			),
			pkg: "pkg", cluster: "4.22.0", want: "pkg.v1.0.0",
			rejected: []Rejection{
				{Bundle: "pkg.v2.0.0", Reasons: []string{"depends on package cert-manager >=1.0.0 (olm.package.required)"}},
				{Bundle: "pkg.v2.1.0", Reasons: []string{"depends on API example.com/v1 Widget (olm.gvk.required)"}},
				{Bundle: "pkg.v2.2.0", Reasons: []string{"declares 1 dependency constraint(s) (olm.constraint)"}},
				{Bundle: "pkg.v2.3.0", Reasons: []string{"depends on APIServices v1beta1.metrics.k8s.io"}},
			},
		},
		{
			name: "restrictions: no webhooks or APIServices",
			catalog: catalogOf(
				bdl("2.0.0", without(PropertyCSVMetadata), with(object(map[string]any{"kind": "ClusterServiceVersion", "metadata": map[string]any{"name": "pkg.v2.0.0"}, "spec": map[string]any{
					"installModes":       []any{map[string]any{"type": AllNamespaces, "supported": true}},
					"webhookdefinitions": []any{map[string]any{"type": "ValidatingAdmissionWebhook", "generateName": "vwidget.example.com"}},
				}}))),
				bdl("2.1.0", with(object(map[string]any{"kind": "MutatingWebhookConfiguration", "metadata": map[string]any{"name": "mutate-widgets"}}))),
				bdl("2.2.0", without(PropertyCSVMetadata), with(prop(PropertyCSVMetadata, map[string]any{
					"installModes":          []map[string]any{{"type": AllNamespaces, "supported": true}},
					"apiServiceDefinitions": map[string]any{"owned": []map[string]string{{"group": "widgets.example.com", "version": "v1", "kind": "Widget", "name": "v1.widgets.example.com"}}},
				}))),
				bdl("1.0.0"),
			),
			pkg: "pkg", cluster: "4.22.0", want: "pkg.v1.0.0",
			rejected: []Rejection{
				{Bundle: "pkg.v2.0.0", Reasons: []string{"defines webhooks: ValidatingAdmissionWebhook vwidget.example.com"}},
				{Bundle: "pkg.v2.1.0", Reasons: []string{"defines webhooks: MutatingWebhookConfiguration mutate-widgets"}},
				{Bundle: "pkg.v2.2.0", Reasons: []string{"defines APIServices: v1.widgets.example.com"}},
			},
		},
		{
			name: "restrictions: registry+v1 with an image in a channel",
			catalog: catalogOf(
				bdl("2.0.0", with(prop(PropertyBundleMediatype, "plain+v0"))),
				bdl("2.1.0", func(b *Bundle) { b.Image = "" }),
				bdl("2.2.0", func(b *Bundle) { b.Channels = nil }),
				bdl("1.0.0", with(prop(PropertyBundleMediatype, RegistryV1))),
			),
			pkg: "pkg", cluster: "4.22.0", want: "pkg.v1.0.0",
			rejected: []Rejection{
				{Bundle: "pkg.v2.0.0", Reasons: []string{`bundle format "plain+v0": only registry+v1 bundles can be platform operators`}},
				{Bundle: "pkg.v2.1.0", Reasons: []string{"no image"}},
				{Bundle: "pkg.v2.2.0", Reasons: []string{"in no channel of the package"}},
			},
		},
		{
			name: "every rule a bundle breaks is listed",
			catalog: catalogOf(bdl("1.0", without(PropertyCSVMetadata), with(maxOCP("4.1")), func(b *Bundle) {
				b.Channels, b.Image = nil, ""
			})),
			pkg: "pkg", cluster: "4.22.0",
			err: `package "pkg": no installable bundle: pkg.v1.0: in no channel of the package; version "1.0": not semver: No Major.Minor.Patch elements found; no image; ` +
				`install modes unknown: no olm.csv.metadata and no ClusterServiceVersion in olm.bundle.object; olm.maxOpenShiftVersion 4.1: below the cluster version 4.22`,
		},
		{
			name:    "nothing installable",
			catalog: catalogOf(bdl("1.0.0", with(maxOCP("4.20"))), bdl("1.1.0", func(b *Bundle) { b.Image = "" })),
			pkg:     "pkg", cluster: "4.22.0",
			err: `package "pkg": no installable bundle: pkg.v1.0.0: olm.maxOpenShiftVersion 4.20: below the cluster version 4.22 | pkg.v1.1.0: no image`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var c *Catalog
			if tc.catalog != nil {
				c = tc.catalog
			}
			sel, err := c.Select(tc.pkg, tc.cluster)
			if tc.err != "" {
				if err == nil {
					t.Fatalf("picked %s, want error %q", sel.Bundle.Name, tc.err)
				}
				if err.Error() != tc.err {
					t.Errorf("error:\n got %s\nwant %s", err, tc.err)
				}
				var se *SourceError
				if !errors.As(err, &se) {
					t.Errorf("error is %T, want *SourceError", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if sel.Bundle.Name != tc.want {
				t.Errorf("picked %s, want %s", sel.Bundle.Name, tc.want)
			}
			if diff := cmp.Diff(tc.rejected, sel.Rejected, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Source" }, cmp.Ignore())); diff != "" {
				t.Errorf("rejected (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSelectBundleFromTestdataCatalog(t *testing.T) {
	c := loadTestdataCatalog(t)
	cases := []struct {
		pkg, cluster, want string
	}{
		{"openshift-cert-manager-operator", "4.22.0", "cert-manager-operator.v1.7.1"},
		{"openshift-cert-manager-operator", "4.21.9", "cert-manager-operator.v1.8.0"},
		{"openshift-cert-manager-operator", "4.23.0", "cert-manager-operator.v1.6.0"},
		{"local-storage-operator", "4.22.0", "local-storage-operator.v4.22.1"},
		{"local-storage-operator", "4.24.0", ""},
	}
	for _, tc := range cases {
		t.Run(tc.pkg+"@"+tc.cluster, func(t *testing.T) {
			sel, err := c.Select(tc.pkg, tc.cluster)
			if tc.want == "" {
				if err == nil {
					t.Fatalf("picked %s, want none", sel.Bundle.Name)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if sel.Bundle.Name != tc.want {
				t.Errorf("picked %s, want %s (rejected: %v)", sel.Bundle.Name, tc.want, sel.Rejected)
			}
		})
	}
}
