package platformoperators

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

// Schemas of the file-based catalog documents the component reads; any other
// schema (olm.deprecations, for one) is skipped.
const (
	SchemaPackage = "olm.package"
	SchemaChannel = "olm.channel"
	SchemaBundle  = "olm.bundle"
)

// Bundle property types the component interprets.
const (
	PropertyPackage             = "olm.package"
	PropertyGVKRequired         = "olm.gvk.required"
	PropertyPackageRequired     = "olm.package.required"
	PropertyConstraint          = "olm.constraint"
	PropertyCSVMetadata         = "olm.csv.metadata"
	PropertyBundleObject        = "olm.bundle.object"
	PropertyBundleMediatype     = "olm.bundle.mediatype"
	PropertyMaxOpenShiftVersion = "olm.maxOpenShiftVersion"
)

// Catalog is a file-based operator catalog: packages, their channels and
// bundles. It is read-only after LoadCatalog and safe for concurrent use.
type Catalog struct {
	// Packages by name.
	Packages map[string]*Package
}

// Package is one olm.package document with the channels and bundles that
// name it.
type Package struct {
	Name           string
	DefaultChannel string
	// Source is where the olm.package document is, FILE#DOC.
	Source string
	// Channels are sorted by name.
	Channels []*Channel
	// Bundles are in catalog order (file name, then document).
	Bundles []*Bundle
}

// Channel is one olm.channel document.
type Channel struct {
	Name    string
	Package string
	// Entries are the names of the bundles in the channel.
	Entries []string
	Source  string
}

// Bundle is one olm.bundle document.
type Bundle struct {
	Name    string
	Package string
	// Image is the bundle image, the BundleDeployment's source.
	Image      string
	Properties []Property
	Source     string
	// Channels are the names of the package's channels that list the
	// bundle, sorted.
	Channels []string
}

// Property is one entry of a bundle's properties, its value as raw JSON.
type Property struct {
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

// PropertiesOf returns the bundle's properties of type t, in order.
func (b *Bundle) PropertiesOf(t string) []Property {
	var out []Property
	for _, p := range b.Properties {
		if p.Type == t {
			out = append(out, p)
		}
	}
	return out
}

// blob is the part of every catalog document the reader looks at.
type blob struct {
	Schema         string     `json:"schema"`
	Name           string     `json:"name"`
	Package        string     `json:"package"`
	DefaultChannel string     `json:"defaultChannel"`
	Image          string     `json:"image"`
	Properties     []Property `json:"properties"`
	Entries        []struct {
		Name string `json:"name"`
	} `json:"entries"`
}

// LoadCatalog reads every .json, .yaml and .yml file under fsys (in
// fs.WalkDir order; names starting with "." are skipped, as are other
// files), each a stream of JSON values or YAML documents, and builds the
// catalog. Every problem is reported, as FILE#DOC: message: a document that
// does not decode, a missing schema or name, a channel or bundle of a
// package with no olm.package document, a name defined twice, a channel
// entry with no olm.bundle.
func LoadCatalog(fsys fs.FS) (*Catalog, error) {
	c := &Catalog{Packages: map[string]*Package{}}
	var channels []*Channel
	var bundles []*Bundle
	var errs []error
	fail := func(pos, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", pos, fmt.Sprintf(format, args...)))
	}
	walkErr := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			errs = append(errs, err)
			return nil
		}
		if p != "." && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		switch path.Ext(p) {
		case ".json", ".yaml", ".yml":
		default:
			return nil
		}
		data, err := manifest.ReadFile(fsys, p, 0)
		if err != nil {
			fail(p, "%v", err)
			return nil
		}
		docs, err := manifest.SplitDocuments(data)
		if err != nil {
			fail(p, "%v", err)
			return nil
		}
		for _, doc := range docs {
			pos := fmt.Sprintf("%s#%d", p, doc.Index)
			raw, err := yaml.YAMLToJSON(doc.Data)
			if err != nil {
				fail(pos, "%v", err)
				continue
			}
			if t := bytes.TrimSpace(raw); len(t) == 0 || bytes.Equal(t, []byte("null")) {
				continue
			}
			var b blob
			if err := json.Unmarshal(raw, &b); err != nil {
				fail(pos, "not a catalog document: %v", err)
				continue
			}
			switch b.Schema {
			case "":
				fail(pos, "schema is required")
			case SchemaPackage:
				if b.Name == "" {
					fail(pos, "%s: name is required", b.Schema)
					continue
				}
				if old, ok := c.Packages[b.Name]; ok {
					fail(pos, "%s %q: already defined at %s", b.Schema, b.Name, old.Source)
					continue
				}
				c.Packages[b.Name] = &Package{Name: b.Name, DefaultChannel: b.DefaultChannel, Source: pos}
			case SchemaChannel:
				if b.Name == "" || b.Package == "" {
					fail(pos, "%s: name and package are required", b.Schema)
					continue
				}
				ch := &Channel{Name: b.Name, Package: b.Package, Source: pos}
				for _, e := range b.Entries {
					ch.Entries = append(ch.Entries, e.Name)
				}
				channels = append(channels, ch)
			case SchemaBundle:
				if b.Name == "" || b.Package == "" {
					fail(pos, "%s: name and package are required", b.Schema)
					continue
				}
				bundles = append(bundles, &Bundle{Name: b.Name, Package: b.Package, Image: b.Image, Properties: b.Properties, Source: pos})
			}
		}
		return nil
	})
	if walkErr != nil {
		errs = append(errs, walkErr)
	}

	byName := map[[2]string]*Bundle{}
	for _, b := range bundles {
		pkg, ok := c.Packages[b.Package]
		if !ok {
			fail(b.Source, "%s %q: package %q has no %s document", SchemaBundle, b.Name, b.Package, SchemaPackage)
			continue
		}
		key := [2]string{b.Package, b.Name}
		if old, ok := byName[key]; ok {
			fail(b.Source, "%s %q of package %q: already defined at %s", SchemaBundle, b.Name, b.Package, old.Source)
			continue
		}
		byName[key] = b
		pkg.Bundles = append(pkg.Bundles, b)
	}
	seenChannel := map[[2]string]*Channel{}
	for _, ch := range channels {
		pkg, ok := c.Packages[ch.Package]
		if !ok {
			fail(ch.Source, "%s %q: package %q has no %s document", SchemaChannel, ch.Name, ch.Package, SchemaPackage)
			continue
		}
		key := [2]string{ch.Package, ch.Name}
		if old, ok := seenChannel[key]; ok {
			fail(ch.Source, "%s %q of package %q: already defined at %s", SchemaChannel, ch.Name, ch.Package, old.Source)
			continue
		}
		seenChannel[key] = ch
		pkg.Channels = append(pkg.Channels, ch)
		for _, e := range ch.Entries {
			b, ok := byName[[2]string{ch.Package, e}]
			if !ok {
				fail(ch.Source, "%s %q: entry %q: package %q has no such %s", SchemaChannel, ch.Name, e, ch.Package, SchemaBundle)
				continue
			}
			if !slices.Contains(b.Channels, ch.Name) {
				b.Channels = append(b.Channels, ch.Name)
			}
		}
	}
	for _, pkg := range c.Packages {
		sort.Slice(pkg.Channels, func(i, j int) bool { return pkg.Channels[i].Name < pkg.Channels[j].Name })
		for _, b := range pkg.Bundles {
			sort.Strings(b.Channels)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return c, nil
}
