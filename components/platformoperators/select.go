package platformoperators

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
)

// RegistryV1 is the only bundle format phase 0 installs.
const RegistryV1 = "registry+v1"

// AllNamespaces is the only install mode phase 0 allows.
const AllNamespaces = "AllNamespaces"

// Rejection says why a bundle was not picked.
type Rejection struct {
	// Bundle is the bundle's name, Source its FILE#DOC in the catalog.
	Bundle string
	Source string
	// Reasons are every rule the bundle broke, in rule order.
	Reasons []string
	// Malformed: the bundle's own declaration cannot be read (a version
	// that is not semver, a property that is not what its type says), as
	// opposed to a bundle the rules filter out.
	Malformed bool
}

// String prints "BUNDLE: REASON; REASON".
func (r Rejection) String() string {
	return r.Bundle + ": " + strings.Join(r.Reasons, "; ")
}

// Selection is the bundle Select picked and why the others were not.
type Selection struct {
	// Package is the package asked for.
	Package string
	// Bundle is the picked bundle, Version its version.
	Bundle  *Bundle
	Version semver.Version
	// Rejected are the package's other bundles that broke a rule, in catalog
	// order. Bundles that passed but lost to a higher version are not listed.
	Rejected []Rejection
}

// SourceError is returned by Select when no bundle can be picked: the
// PlatformOperator's Installed condition says SourceFailed with its message.
type SourceError struct {
	// Package is the package asked for.
	Package string
	// Detail says what went wrong in a few words.
	Detail string
	// Rejected are the package's bundles and their reasons.
	Rejected []Rejection
}

// Error prints `package "P": DETAIL[: BUNDLE: REASON; ...; BUNDLE: ...]`.
func (e *SourceError) Error() string {
	msg := fmt.Sprintf("package %q: %s", e.Package, e.Detail)
	if len(e.Rejected) > 0 {
		parts := make([]string, len(e.Rejected))
		for i, r := range e.Rejected {
			parts[i] = r.String()
		}
		msg += ": " + strings.Join(parts, " | ")
	}
	return msg
}

// Select picks the bundle to install for package pkg on a cluster at
// clusterVersion (the release version; "" when unknown). Of the package's
// bundles it keeps those that
//   - are listed by one of the package's channels;
//   - are registry+v1 (olm.bundle.mediatype, when given);
//   - have exactly one olm.package property, naming pkg, whose version is
//     semver;
//   - have an image;
//   - declare no dependency (olm.gvk.required, olm.package.required,
//     olm.constraint, required APIService definitions);
//   - support the AllNamespaces install mode and no other (from
//     olm.csv.metadata, else the ClusterServiceVersion in olm.bundle.object;
//     unknown install modes are a rejection);
//   - define no webhook and own no APIService (the CSV's
//     webhookdefinitions and apiservicedefinitions, webhook configuration
//     and APIService objects; with only olm.csv.metadata, webhooks cannot be
//     seen and are not checked);
//   - have at most one olm.maxOpenShiftVersion (a bundle property, else in
//     the CSV's olm.properties annotation), and, when they have one, a value
//     whose major.minor is not below the cluster version's major.minor (an
//     unknown cluster version rejects such a bundle);
//
// and picks the highest version (equal versions: the smallest bundle name).
// The error is a *SourceError when nothing is left, the package is not in
// the catalog, or c is nil (no catalog).
func (c *Catalog) Select(pkg, clusterVersion string) (*Selection, error) {
	if c == nil {
		return nil, &SourceError{Package: pkg, Detail: "no catalog given to source it from"}
	}
	p, ok := c.Packages[pkg]
	if !ok {
		return nil, &SourceError{Package: pkg, Detail: "not in the catalog"}
	}
	if len(p.Bundles) == 0 {
		return nil, &SourceError{Package: pkg, Detail: "has no bundles in the catalog"}
	}
	var cluster *semver.Version
	if v, err := semver.ParseTolerant(clusterVersion); err == nil {
		cluster = &v
	}
	type candidate struct {
		b *Bundle
		v semver.Version
	}
	var candidates []candidate
	sel := &Selection{Package: pkg}
	for _, b := range p.Bundles {
		v, reasons, malformed := checkBundle(b, pkg, clusterVersion, cluster)
		if len(reasons) > 0 {
			sel.Rejected = append(sel.Rejected, Rejection{Bundle: b.Name, Source: b.Source, Reasons: reasons, Malformed: malformed})
			continue
		}
		candidates = append(candidates, candidate{b, v})
	}
	if len(candidates) == 0 {
		return nil, &SourceError{Package: pkg, Detail: "no installable bundle", Rejected: sel.Rejected}
	}
	sort.SliceStable(candidates, func(i, j int) bool {
		if c := candidates[i].v.Compare(candidates[j].v); c != 0 {
			return c > 0
		}
		return candidates[i].b.Name < candidates[j].b.Name
	})
	sel.Bundle, sel.Version = candidates[0].b, candidates[0].v
	return sel, nil
}

// checkBundle applies Select's rules to one bundle and returns its version,
// the rules it broke, and whether its own declaration cannot be read.
func checkBundle(b *Bundle, pkg, clusterVersion string, cluster *semver.Version) (semver.Version, []string, bool) {
	var reasons []string
	malformed := false
	add := func(format string, args ...any) { reasons = append(reasons, fmt.Sprintf(format, args...)) }
	bad := func(format string, args ...any) { malformed = true; add(format, args...) }

	if len(b.Channels) == 0 {
		add("in no channel of the package")
	}
	for _, p := range b.PropertiesOf(PropertyBundleMediatype) {
		var mt string
		if err := json.Unmarshal(p.Value, &mt); err != nil {
			bad("%s: %v", PropertyBundleMediatype, err)
		} else if mt != RegistryV1 {
			add("bundle format %q: only %s bundles can be platform operators", mt, RegistryV1)
		}
	}

	var version semver.Version
	switch pp := b.PropertiesOf(PropertyPackage); len(pp) {
	case 0:
		add("no %s property (package and version)", PropertyPackage)
	case 1:
		var v struct {
			PackageName string `json:"packageName"`
			Version     string `json:"version"`
		}
		if err := json.Unmarshal(pp[0].Value, &v); err != nil {
			bad("%s: %v", PropertyPackage, err)
			break
		}
		if v.PackageName != pkg {
			add("%s names package %q", PropertyPackage, v.PackageName)
		}
		parsed, err := semver.Parse(v.Version)
		if err != nil {
			bad("version %q: not semver: %v", v.Version, err)
			break
		}
		version = parsed
	default:
		add("%d %s properties, want one", len(pp), PropertyPackage)
	}

	if b.Image == "" {
		add("no image")
	}

	for _, p := range b.PropertiesOf(PropertyGVKRequired) {
		var v struct{ Group, Version, Kind string }
		_ = json.Unmarshal(p.Value, &v)
		add("depends on API %s/%s %s (%s)", v.Group, v.Version, v.Kind, PropertyGVKRequired)
	}
	for _, p := range b.PropertiesOf(PropertyPackageRequired) {
		var v struct {
			PackageName  string `json:"packageName"`
			VersionRange string `json:"versionRange"`
		}
		_ = json.Unmarshal(p.Value, &v)
		add("depends on package %s %s (%s)", v.PackageName, v.VersionRange, PropertyPackageRequired)
	}
	if n := len(b.PropertiesOf(PropertyConstraint)); n > 0 {
		add("declares %d dependency constraint(s) (%s)", n, PropertyConstraint)
	}

	csv, problems := bundleCSV(b)
	reasons = append(reasons, problems...)
	if len(csv.requiredAPIServices) > 0 {
		add("depends on APIServices %s", strings.Join(csv.requiredAPIServices, ", "))
	}
	switch {
	case csv.installModes == nil:
		add("install modes unknown: no %s and no ClusterServiceVersion in %s", PropertyCSVMetadata, PropertyBundleObject)
	case !csv.installModes[AllNamespaces]:
		add("does not support the %s install mode", AllNamespaces)
	default:
		var others []string
		for m, ok := range csv.installModes {
			if ok && m != AllNamespaces {
				others = append(others, m)
			}
		}
		if len(others) > 0 {
			sort.Strings(others)
			add("supports install modes other than %s: %s", AllNamespaces, strings.Join(others, ", "))
		}
	}
	if len(csv.webhooks) > 0 {
		add("defines webhooks: %s", strings.Join(csv.webhooks, ", "))
	}
	if len(csv.ownedAPIServices) > 0 {
		add("defines APIServices: %s", strings.Join(csv.ownedAPIServices, ", "))
	}

	maxVersions := rawStrings(b.PropertiesOf(PropertyMaxOpenShiftVersion))
	if len(b.PropertiesOf(PropertyMaxOpenShiftVersion)) == 0 {
		maxVersions = csv.maxOpenShiftVersions
	}
	switch len(maxVersions) {
	case 0:
	case 1:
		if r := checkMaxOpenShiftVersion(maxVersions[0], clusterVersion, cluster); r != "" {
			add("%s", r)
		}
	default:
		add("%d %s properties, want at most one", len(maxVersions), PropertyMaxOpenShiftVersion)
	}
	return version, reasons, malformed
}

// checkMaxOpenShiftVersion compares a bundle's maxOpenShiftVersion with the
// cluster version by major.minor, as OLM does, and returns why the bundle
// does not fit, or "".
func checkMaxOpenShiftVersion(value, clusterVersion string, cluster *semver.Version) string {
	if value == "" {
		return ""
	}
	max, err := semver.ParseTolerant(value)
	if err != nil {
		return fmt.Sprintf("%s %q: not a version", PropertyMaxOpenShiftVersion, value)
	}
	if cluster == nil {
		if clusterVersion == "" {
			return fmt.Sprintf("%s %s: the cluster version is unknown", PropertyMaxOpenShiftVersion, value)
		}
		return fmt.Sprintf("%s %s: the cluster version %q is not a version", PropertyMaxOpenShiftVersion, value, clusterVersion)
	}
	if max.Major < cluster.Major || max.Major == cluster.Major && max.Minor < cluster.Minor {
		return fmt.Sprintf("%s %s: below the cluster version %d.%d", PropertyMaxOpenShiftVersion, value, cluster.Major, cluster.Minor)
	}
	return ""
}

// rawStrings returns each property's value as text: a JSON string
// unquoted, anything else (a number such as 4.10) as written.
func rawStrings(ps []Property) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, rawString(p.Value))
	}
	return out
}

func rawString(v json.RawMessage) string {
	var s string
	if err := json.Unmarshal(v, &s); err == nil {
		return strings.TrimSpace(s)
	}
	return strings.TrimSpace(string(v))
}
