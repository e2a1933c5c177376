package overlay

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/yaml"
)

// Check reports every reference of the overlay's kustomization files that
// reaches outside the overlay's directory: absolute paths, paths that climb
// out with "..", remote resources (URLs, git), files that do not exist (which
// kustomize would otherwise try to fetch as remote), and Helm charts (which
// run a program), and fields kustomize does not know (a misspelt field
// would otherwise be an error only at build time). Nested kustomizations
// the overlay uses are checked too.
// Each problem is an *Error naming the kustomization file; all are joined.
func (o *Overlay) Check() error {
	c := &checker{o: o, visited: map[string]bool{}}
	c.kustomization(o.Dir, o.kustomization, true)
	return errors.Join(c.errs...)
}

type checker struct {
	o       *Overlay
	visited map[string]bool
	errs    []error
}

func (c *checker) errorf(file, format string, args ...any) {
	c.errs = append(c.errs, &Error{File: c.o.Source.Label + file, Err: fmt.Errorf(format, args...)})
}

// kind says what a reference must name.
type kind int

const (
	fileRef      kind = iota // a file
	dirRef                   // a directory with a kustomization
	fileOrDirRef             // either
)

func (c *checker) kustomization(dir, name string, root bool) {
	file := path.Join(dir, name)
	if c.visited[file] {
		return
	}
	c.visited[file] = true
	data, err := fs.ReadFile(c.o.Source.FS, file)
	if err != nil {
		c.errorf(file, "read: %v", err)
		return
	}
	// Decoded as kustomize decodes it: unknown fields are errors here,
	// before any build, rather than at build time.
	var k types.Kustomization
	if err := k.Unmarshal(data); err != nil {
		c.errorf(file, "parse: %v", err)
		return
	}
	if root && k.Kind == types.ComponentKind {
		c.errorf(file, "an overlay must be a Kustomization, not a Component")
	}
	if len(k.HelmCharts) > 0 || len(k.HelmChartInflationGenerator) > 0 || k.HelmGlobals != nil {
		c.errorf(file, "helm charts are not supported in overlays: they run a program and fetch charts")
	}
	ref := func(field, p string, want kind) { c.ref(dir, file, field, p, want) }
	for i, p := range k.Resources {
		ref(fmt.Sprintf("resources[%d]", i), p, fileOrDirRef)
	}
	for i, p := range k.Bases {
		ref(fmt.Sprintf("bases[%d]", i), p, dirRef)
	}
	for i, p := range k.Components {
		ref(fmt.Sprintf("components[%d]", i), p, dirRef)
	}
	for i, p := range k.Crds {
		ref(fmt.Sprintf("crds[%d]", i), p, fileRef)
	}
	for i, p := range k.Configurations {
		ref(fmt.Sprintf("configurations[%d]", i), p, fileRef)
	}
	for field, list := range map[string][]string{"generators": k.Generators, "transformers": k.Transformers, "validators": k.Validators} {
		for i, p := range list {
			f := fmt.Sprintf("%s[%d]", field, i)
			if isInline(p) {
				c.pluginConfig(dir, file, f, []byte(p))
				continue
			}
			ref(f, p, fileOrDirRef)
			if data, err := fs.ReadFile(c.o.Source.FS, path.Join(dir, p)); err == nil && c.inside(path.Join(dir, p)) {
				c.pluginConfig(dir, file, f, data)
			}
		}
	}
	for i, p := range k.PatchesStrategicMerge {
		if !isInline(string(p)) {
			ref(fmt.Sprintf("patchesStrategicMerge[%d]", i), string(p), fileRef)
		}
	}
	for i, p := range k.Patches {
		if p.Path != "" {
			ref(fmt.Sprintf("patches[%d].path", i), p.Path, fileRef)
		}
	}
	for i, p := range k.PatchesJson6902 {
		if p.Path != "" {
			ref(fmt.Sprintf("patchesJson6902[%d].path", i), p.Path, fileRef)
		}
	}
	for i, r := range k.Replacements {
		if r.Path != "" {
			ref(fmt.Sprintf("replacements[%d].path", i), r.Path, fileRef)
		}
	}
	generators := func(field string, i int, a types.GeneratorArgs) {
		for j, s := range a.FileSources {
			p := s
			if _, after, ok := strings.Cut(s, "="); ok {
				p = after
			}
			ref(fmt.Sprintf("%s[%d].files[%d]", field, i, j), p, fileRef)
		}
		for j, p := range a.EnvSources {
			ref(fmt.Sprintf("%s[%d].envs[%d]", field, i, j), p, fileRef)
		}
		if a.EnvSource != "" {
			ref(fmt.Sprintf("%s[%d].env", field, i), a.EnvSource, fileRef)
		}
	}
	for i, g := range k.ConfigMapGenerator {
		generators("configMapGenerator", i, g.GeneratorArgs)
	}
	for i, g := range k.SecretGenerator {
		generators("secretGenerator", i, g.GeneratorArgs)
	}
	if p, ok := k.OpenAPI["path"]; ok {
		ref("openapi.path", p, fileRef)
	}
}

// pluginConfig checks the file references of a built-in generator or
// transformer configuration, which kustomize loads relative to the
// kustomization: "path" (PatchTransformer, PatchJson6902Transformer),
// "paths" (PatchStrategicMergeTransformer) and "replacements[].path"
// (ReplacementTransformer). Other "path" keys, such as fieldSpecs', are
// field paths, not files.
func (c *checker) pluginConfig(dir, file, field string, data []byte) {
	for _, d := range strings.Split(string(data), "\n---") {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(d), &m); err != nil {
			continue // kustomize reports it
		}
		if p, ok := m["path"].(string); ok {
			c.ref(dir, file, field+" path", p, fileRef)
		}
		if ps, ok := m["paths"].([]any); ok {
			for _, p := range ps {
				if p, ok := p.(string); ok {
					c.ref(dir, file, field+" paths", p, fileRef)
				}
			}
		}
		if rs, ok := m["replacements"].([]any); ok {
			for _, r := range rs {
				if r, ok := r.(map[string]any); ok {
					if p, ok := r["path"].(string); ok {
						c.ref(dir, file, field+" replacements path", p, fileRef)
					}
				}
			}
		}
	}
}

// isInline tells an inline patch or plugin configuration from a path.
func isInline(s string) bool {
	s = strings.TrimSpace(s)
	return strings.Contains(s, "\n") || strings.HasPrefix(s, "{")
}

// isRemote reports references kustomize would fetch: URLs and git specs.
func isRemote(p string) bool {
	for _, prefix := range []string{"git@", "git::", "gh:", "github.com/", "gitlab.com/", "bitbucket.org/"} {
		if strings.HasPrefix(p, prefix) {
			return true
		}
	}
	return strings.Contains(p, "://") || strings.Contains(p, "?ref=") || strings.Contains(p, ".git//")
}

func (c *checker) inside(p string) bool {
	return p == c.o.Dir || strings.HasPrefix(p, c.o.Dir+"/")
}

// ref checks one reference p made by file (in dir) under field.
func (c *checker) ref(dir, file, field, p string, want kind) {
	switch {
	case strings.TrimSpace(p) == "":
		c.errorf(file, "%s: empty path", field)
		return
	case isRemote(p):
		c.errorf(file, "%s %q: remote resources are not allowed: an overlay may only read files under its own directory", field, p)
		return
	case path.IsAbs(p) || strings.HasPrefix(p, `\`) || (len(p) > 1 && p[1] == ':'):
		c.errorf(file, "%s %q: absolute paths are not allowed: an overlay may only read files under its own directory", field, p)
		return
	}
	target := path.Join(dir, p)
	if !c.inside(target) {
		c.errorf(file, "%s %q: refers outside the overlay directory %s: an overlay may only read files under its own directory", field, p, c.o.Dir)
		return
	}
	st, err := fs.Stat(c.o.Source.FS, target)
	if errors.Is(err, fs.ErrNotExist) {
		c.errorf(file, "%s %q: no such file or directory in the overlay", field, p)
		return
	}
	if err != nil {
		// For example a symbolic link leaving the directory, refused by
		// an os.Root.
		c.errorf(file, "%s %q: %v", field, p, err)
		return
	}
	switch {
	case st.IsDir() && want == fileRef:
		c.errorf(file, "%s %q: is a directory, want a file", field, p)
	case !st.IsDir() && want == dirRef:
		c.errorf(file, "%s %q: is a file, want a directory with a kustomization", field, p)
	case st.IsDir():
		kf, err := kustomizationFile(c.o.Source.FS, target)
		if err != nil {
			c.errorf(file, "%s %q: no kustomization file in the directory", field, p)
			return
		}
		c.kustomization(target, kf, false)
	}
}
