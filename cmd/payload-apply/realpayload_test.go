package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"text/template"

	"github.com/blang/semver/v4"
	"github.com/google/go-cmp/cmp"
	configv1 "github.com/openshift/api/config/v1"
	"github.com/openshift/api/features"
	lgmanifest "github.com/openshift/library-go/pkg/manifest"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/yaml"

	"github.com/payload-apply/payload-apply/internal/realpayload"
	"github.com/payload-apply/payload-apply/payload"
	"github.com/payload-apply/payload-apply/plan"
)

var (
	referenceProfiles = map[string]features.ClusterProfileName{
		"self-managed-high-availability": features.SelfManaged,
		"single-node-developer":          features.SelfManaged,
		"ibm-cloud-managed":              features.Hypershift,
		"hypershift":                     features.Hypershift,
	}
	referenceFeatureSets = []string{"Default", "TechPreviewNoUpgrade", "DevPreviewNoUpgrade", "CustomNoUpgrade", "OKD"}
)

// lgFile is one raw payload file parsed by library-go.
type lgFile struct {
	path      string
	manifests []lgmanifest.Manifest
}

// lgCache holds release-manifests/ parsed once, and manifests/ per profile
// (its templates see the profile).
var lgCache = map[string][]lgFile{}

// libraryGoSelection computes, independently of our code, what library-go's
// Include keeps from the raw payload files: one "FILE APIVERSION KIND NS NAME"
// line per object, sorted.
func libraryGoSelection(t testing.TB, dir, profile, featureSet string) []string {
	t.Helper()
	meta, err := os.ReadFile(filepath.Join(dir, "release-manifests", "release-metadata"))
	if err != nil {
		t.Fatal(err)
	}
	var md struct{ Version string }
	if err := yaml.Unmarshal(meta, &md); err != nil {
		t.Fatal(err)
	}
	v := semver.MustParse(md.Version)
	major := v.Major
	var ims struct {
		Spec struct {
			Tags []struct {
				Name string
				From struct{ Name string }
			}
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "release-manifests", "image-references"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &ims); err != nil {
		t.Fatal(err)
	}
	images := map[string]string{}
	for _, tag := range ims.Spec.Tags {
		images[tag.Name] = tag.From.Name
	}

	gates := sets.New[string]()
	if featureSet != "CustomNoUpgrade" {
		fs := configv1.FeatureSet(featureSet)
		if featureSet == "Default" {
			fs = configv1.Default
		}
		for _, g := range features.FeatureSets(major, referenceProfiles[profile], fs).Enabled {
			gates.Insert(string(g.FeatureGateAttributes.Name))
		}
	}

	var out []string
	for _, sub := range []string{"manifests", "release-manifests"} {
		key := sub
		if sub == "manifests" {
			key += "/" + profile
		}
		files, ok := lgCache[key]
		if !ok {
			files = parseWithLibraryGo(t, dir, sub, profile, md.Version, images)
			lgCache[key] = files
		}
		for _, f := range files {
			for _, m := range f.manifests {
				if m.Include(nil, &featureSet, &profile, nil, nil, gates, &major) != nil {
					continue
				}
				out = append(out, fmt.Sprintf("%s %s %s %s %s", f.path, m.Obj.GetAPIVersion(), m.GVK.Kind, m.Obj.GetNamespace(), m.Obj.GetName()))
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestRenderListMatchesLibraryGo: for every reference profile and feature set,
// `render --list` on the real payload lists exactly what library-go keeps,
// in the CVO's order: the files of manifests/ first, then the others, run
// levels never going down within each.
func TestRenderListMatchesLibraryGo(t *testing.T) {
	dir := realpayload.Dir(t)
	for profile := range referenceProfiles {
		for _, fs := range referenceFeatureSets {
			t.Run(profile+"/"+fs, func(t *testing.T) {
				out, deleted := renderList(t, dir, profile, fs)
				// Objects the profile's overlays delete were selected:
				// they count for the comparison with library-go.
				got := deleted
				last, group := -1, 0
				unordered := false
				for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
					f := strings.Split(line, "\t")
					if len(f) != 7 {
						t.Fatalf("line %q has %d fields", line, len(f))
					}
					g := 1
					if strings.HasPrefix(f[2], "manifests/") {
						g = 0
					}
					switch {
					case g < group:
						t.Errorf("%s after the files of manifests/ ended", f[2])
					case g > group:
						group, last = g, -1
					}
					if f[0] == "-" {
						unordered = true
					} else {
						level, err := strconv.Atoi(f[0])
						if err != nil || level < last || unordered {
							t.Errorf("run level %q after %d: apply order broken", f[0], last)
						}
						last = level
					}
					if strings.HasPrefix(f[2], "generated/") {
						// Objects the components render (the default
						// IngressController, ...) are not the payload's.
						continue
					}
					got = append(got, strings.Join(f[2:], " "))
				}
				sort.Strings(got)
				want := libraryGoSelection(t, dir, profile, fs)
				if len(want) == 0 {
					t.Fatal("library-go includes nothing: the test is broken")
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("render --list differs from library-go's Include (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func TestValidateRealPayload(t *testing.T) {
	dir := realpayload.Dir(t)
	out, errOut, code := runCLI(t, "validate", "--payload", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "0 errors") || !strings.Contains(out, "warning:") {
		t.Errorf("want warnings and no errors; stdout:\n%s\nstderr:\n%s", out, errOut)
	}
	// The payload's known oddities are reported.
	for _, want := range []string{
		`="false-except-for-the-config-operator" is not "true"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("validate output lacks %q", want)
		}
	}
}

func parseWithLibraryGo(t testing.TB, dir, sub, profile, version string, images map[string]string) []lgFile {
	entries, err := os.ReadDir(filepath.Join(dir, sub))
	if err != nil {
		t.Fatal(err)
	}
	var files []lgFile
	for _, e := range entries {
		ext := filepath.Ext(e.Name())
		if e.IsDir() || (ext != ".yaml" && ext != ".yml" && ext != ".json") {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(dir, sub, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if sub == "manifests" {
			tmpl, err := template.New(e.Name()).Parse(string(raw))
			if err != nil {
				continue
			}
			var b bytes.Buffer
			if err := tmpl.Execute(&b, map[string]any{"ReleaseImage": "quay.io/openshift-release-dev/ocp-release:" + version, "ClusterProfile": profile, "Images": images}); err != nil {
				continue
			}
			raw = b.Bytes()
		}
		ms, err := lgmanifest.ParseManifests(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("%s/%s: %v", sub, e.Name(), err)
		}
		files = append(files, lgFile{path: sub + "/" + e.Name(), manifests: ms})
	}
	return files
}

var loadedReal *payload.Payload

// renderList is `render --list` for one selection, and the selected objects
// the profile's overlays deleted ("FILE APIVERSION KIND NAMESPACE NAME").
// The CLI itself runs for the Default feature set; the other feature sets
// reuse one loaded payload through the same plan.Build and WriteList the
// command calls, so the test stays fast under -race.
func renderList(t *testing.T, dir, profile, featureSet string) (string, []string) {
	t.Helper()
	p := planReal(t, dir, profile, featureSet)
	var deleted []string
	for _, c := range p.OverlayChanges {
		if c.Object == nil && c.Source != nil {
			m := c.Source
			deleted = append(deleted, fmt.Sprintf("%s %s %s %s %s", m.File, m.Obj.GetAPIVersion(), m.GVK.Kind, m.Obj.GetNamespace(), m.Obj.GetName()))
		}
	}
	if featureSet == "Default" {
		out, errOut, code := runCLI(t, "render", "--list", "--payload", dir, "--profile", profile, "--feature-set", featureSet)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		return out, deleted
	}
	var b bytes.Buffer
	if err := p.WriteList(&b); err != nil {
		t.Fatal(err)
	}
	return b.String(), deleted
}

// planReal plans one selection of the real payload, loaded once.
func planReal(t *testing.T, dir, profile, featureSet string) *plan.Plan {
	t.Helper()
	if loadedReal == nil {
		p, err := payload.Load(context.Background(), os.DirFS(dir), payload.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		loadedReal = p
	}
	p, err := plan.Build(context.Background(), plan.Options{Loaded: loadedReal, Profile: profile, FeatureSet: featureSet})
	if err != nil {
		t.Fatal(err)
	}
	return p
}
