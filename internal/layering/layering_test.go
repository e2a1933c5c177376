package layering

import (
	"bytes"
	"encoding/json"
	"errors"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// clusterIO are the packages that talk to a cluster or a registry: a
// package whose doc says "Cluster I/O: none." must not depend on any of
// them, directly or not. Module packages are named relative to the module.
var clusterIO = []string{
	"k8s.io/client-go/rest",
	"k8s.io/client-go/dynamic",
	"k8s.io/client-go/discovery",
	"k8s.io/client-go/transport",
	"k8s.io/client-go/kubernetes",
	"k8s.io/client-go/tools/clientcmd",
	"github.com/google/go-containerregistry/pkg/v1/remote",
}

// pkg is what `go list -json` says of a package.
type pkg struct {
	ImportPath string
	Dir        string
	Name       string
	GoFiles    []string
	Imports    []string
	Deps       []string
	Module     *struct{ Path string }
}

// rule is a package's documented import rule.
type rule struct {
	mayImport []string // module-relative patterns
	pure      bool
}

var (
	mayImportRE = regexp.MustCompile(`(?m)^May import:`)
	pureRE      = regexp.MustCompile(`(?m)^Cluster I/O: none\.`)
)

// parseRule reads the rule of a package comment: the line starting
// "May import:", and the lines after it while each line ends with a comma;
// a period ends the list (one not part of "...").
func parseRule(doc string) (rule, error) {
	loc := mayImportRE.FindStringIndex(doc)
	if loc == nil {
		return rule{}, errors.New(`the package comment has no line starting "May import:"`)
	}
	var text []string
	for _, line := range strings.Split(doc[loc[1]:], "\n") {
		line = strings.TrimSpace(line)
		text = append(text, line)
		if !strings.HasSuffix(line, ",") {
			break
		}
	}
	joined := strings.Join(text, " ")
	if strings.HasSuffix(joined, ".") && (!strings.HasSuffix(joined, "...") || strings.HasSuffix(joined, "....")) {
		joined = strings.TrimSuffix(joined, ".")
	}
	r := rule{pure: pureRE.MatchString(doc)}
	list := strings.Join(strings.Fields(joined), " ")
	if list == "nothing" {
		return r, nil
	}
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" || strings.ContainsAny(item, " \t") {
			return rule{}, errors.New(`"May import:" lists ` + strconvQuote(item) + `: want module-relative package paths separated by commas`)
		}
		r.mayImport = append(r.mayImport, item)
	}
	return r, nil
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// matches reports whether the module-relative path p matches pattern.
func matches(pattern, p string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return p == base || strings.HasPrefix(p, base+"/")
	}
	return p == pattern
}

// packageDoc returns the package comments of a package's Go files.
func packageDoc(p pkg) (string, error) {
	var b strings.Builder
	fset := token.NewFileSet()
	for _, f := range p.GoFiles {
		file, err := parser.ParseFile(fset, filepath.Join(p.Dir, f), nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			return "", err
		}
		if file.Doc != nil {
			b.WriteString(file.Doc.Text())
			b.WriteString("\n")
		}
	}
	return b.String(), nil
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", "-deps=false", "./...")
	root, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(root)))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// TestLayering checks every package of the module against the rule its
// doc comment states.
func TestLayering(t *testing.T) {
	pkgs := listPackages(t)
	if len(pkgs) == 0 {
		t.Fatal("go list found no packages")
	}
	module := pkgs[0].Module.Path + "/"
	rel := func(path string) (string, bool) { return strings.CutPrefix(path, module) }
	known := map[string]bool{}
	for _, p := range pkgs {
		r, _ := rel(p.ImportPath)
		known[r] = true
	}
	for _, p := range pkgs {
		name, _ := rel(p.ImportPath)
		t.Run(name, func(t *testing.T) {
			doc, err := packageDoc(p)
			if err != nil {
				t.Fatal(err)
			}
			r, err := parseRule(doc)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for _, pat := range r.mayImport {
				used := false
				for k := range known {
					used = used || matches(pat, k)
				}
				if !used {
					t.Errorf("%s: may import %q, which names no package of the module", name, pat)
				}
			}
			for _, imp := range p.Imports {
				ri, ok := rel(imp)
				if !ok {
					continue
				}
				allowed := false
				for _, pat := range r.mayImport {
					allowed = allowed || matches(pat, ri)
				}
				if !allowed {
					t.Errorf("%s imports %s, which its doc comment does not allow (May import: %s)", name, ri, strings.Join(r.mayImport, ", "))
				}
			}
			if !r.pure {
				return
			}
			var bad []string
			for _, d := range p.Deps {
				for _, io := range clusterIO {
					if d == io {
						bad = append(bad, d)
					}
				}
				if rd, ok := rel(d); ok && !pureModulePackage(pkgs, module, rd) {
					bad = append(bad, rd)
				}
			}
			sort.Strings(bad)
			if len(bad) > 0 {
				t.Errorf("%s says \"Cluster I/O: none.\" but depends on %s", name, strings.Join(bad, ", "))
			}
		})
	}
}

// pureModulePackage reports whether the module package rd says it is pure;
// a pure package may depend only on pure ones.
func pureModulePackage(pkgs []pkg, module, rd string) bool {
	for _, p := range pkgs {
		if p.ImportPath != module+rd {
			continue
		}
		doc, err := packageDoc(p)
		if err != nil {
			return false
		}
		r, err := parseRule(doc)
		return err == nil && r.pure
	}
	return false
}

// TestParseRule pins the grammar, including the mistakes it refuses.
func TestParseRule(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      []string
		pure      bool
		err       bool
	}{
		{"list over lines", "Package x.\n\nMay import: lib/manifest,\npayload, lib/...\nCluster I/O: none.\n", []string{"lib/manifest", "payload", "lib/..."}, true, false},
		{"nothing", "May import: nothing.\n", nil, false, false},
		{"missing", "Package x does things.\n", nil, false, true},
		{"words instead of paths", "May import: lib/manifest and payload.\n", nil, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := parseRule(tc.doc)
			if (err != nil) != tc.err {
				t.Fatalf("err = %v, want error %v", err, tc.err)
			}
			if strings.Join(r.mayImport, "|") != strings.Join(tc.want, "|") || r.pure != tc.pure {
				t.Errorf("rule %+v, want %v pure %v", r, tc.want, tc.pure)
			}
		})
	}
	if !matches("lib/...", "lib") || !matches("lib/...", "lib/manifest") || matches("lib/...", "library") || matches("plan", "plan/x") {
		t.Error("matches: wrong")
	}
}
