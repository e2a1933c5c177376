package genpayload

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Options say what to generate.
type Options struct {
	// Seed makes the payload: the same seed and scale give the same bytes.
	Seed uint64
	// Scale multiplies the release-manifests components (1: a payload the
	// size of a release, 10, 100). Less than 1 means 1.
	Scale int
}

// File is one generated file.
type File struct {
	// Path is relative to the payload root, slash-separated.
	Path string
	// Data is the file's content.
	Data []byte
}

// Version returns the release version a payload generated with opts
// declares (release-metadata and the image-references ImageStream name).
func Version(opts Options) string {
	return fmt.Sprintf("4.22.0-0.synthetic-s%d-x%d", opts.Seed, max(opts.Scale, 1))
}

// Generate returns the files of a payload, sorted by path:
// manifests/ (the CVO's own, Go templates), release-manifests/ with
// Scale times the real payload's components, release-metadata and
// image-references. Replica r of the components is drawn from its own
// random stream (seeded with Seed and r), so a payload of scale 10 holds
// the components of scale 1 and nine more.
func Generate(opts Options) []File {
	scale := max(opts.Scale, 1)
	var files []File
	var images []imageTag
	cvo := newGenerator(opts.Seed, 1<<32)
	cvoComp := cvo.component("cluster-version-operator", "cluster-version-operator", 0, cvoRole, fileKinds{groups: 1, lone: 2, bundles: 2, singles: cvoFiles - 5 - 4 - 3})
	files = append(files, cvoComp.files...)
	for r := 0; r < scale; r++ {
		g := newGenerator(opts.Seed, uint64(r))
		order := g.rng.Perm(len(components))
		plan := g.deal()
		for i, shape := range components {
			name := componentNames[order[i]%len(componentNames)]
			if r > 0 {
				name = fmt.Sprintf("%s-r%d", name, r)
			}
			// The first component of the first replica (the largest, at
			// run level 10) plays the config operator.
			ro := plainRole
			if r == 0 && i == 0 {
				ro = configRole
			}
			c := g.component("cluster-"+name+"-operator", name, shape.level, ro, plan[i])
			files = append(files, c.files...)
			images = append(images, c.images...)
			// Tags that no manifest uses, as real releases have.
			if g.rng.Float64() < 0.5 {
				images = append(images, imageTag{name: name + "-tools", spec: g.pullSpec()})
			}
		}
	}
	version := Version(opts)
	files = append(files, File{Path: "release-manifests/release-metadata", Data: releaseMetadata(version)})
	files = append(files, File{Path: "release-manifests/image-references", Data: imageReferences(version, images)})
	slices.SortFunc(files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	return files
}

// Write generates a payload into dir (created if needed) and returns the
// number of files and bytes written. The directory then holds exactly the
// generated payload: files of manifests/ and release-manifests/ that the
// payload does not have (an older payload's, of another scale or seed)
// are removed, and their number returned as stale; other entries of dir
// and subdirectories are left alone.
func Write(dir string, opts Options) (files int, bytes int64, stale int, err error) {
	for _, sub := range []string{"manifests", "release-manifests"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return 0, 0, 0, err
		}
	}
	gen := Generate(opts)
	want := make(map[string]bool, len(gen))
	var errs []error
	for _, f := range gen {
		want[f.Path] = true
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(f.Path)), f.Data, 0o644); err != nil {
			errs = append(errs, err)
			continue
		}
		files++
		bytes += int64(len(f.Data))
	}
	for _, sub := range []string{"manifests", "release-manifests"} {
		entries, err := os.ReadDir(filepath.Join(dir, sub))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, e := range entries {
			if e.IsDir() || want[sub+"/"+e.Name()] {
				continue
			}
			if err := os.Remove(filepath.Join(dir, sub, e.Name())); err != nil {
				errs = append(errs, err)
				continue
			}
			stale++
		}
	}
	return files, bytes, stale, errors.Join(errs...)
}

type weighted[T any] struct {
	v T
	w int
}

func pick[T any](rng *rand.Rand, ws []weighted[T]) T {
	total := 0
	for _, w := range ws {
		total += w.w
	}
	n := rng.IntN(total)
	for _, w := range ws {
		if n < w.w {
			return w.v
		}
		n -= w.w
	}
	return ws[len(ws)-1].v
}

type generator struct {
	rng     *rand.Rand
	lone    []int // CRD sizes left to draw (see draw)
	variant []int
	scratch bytes.Buffer
}

func newGenerator(seed, stream uint64) *generator {
	return &generator{rng: rand.New(rand.NewPCG(seed, stream))}
}

// draw takes a size without replacement from sizes (refilled and shuffled
// when empty), so a replica's CRDs have the real payload's size mix.
func (g *generator) draw(pool *[]int, sizes []int) int {
	if len(*pool) == 0 {
		*pool = slices.Clone(sizes)
		g.rng.Shuffle(len(*pool), func(i, j int) { (*pool)[i], (*pool)[j] = (*pool)[j], (*pool)[i] })
	}
	n := (*pool)[len(*pool)-1]
	*pool = (*pool)[:len(*pool)-1]
	return n
}

// size returns the length of v written as the value of a key at indent.
func (g *generator) size(v any, indent int) int {
	g.scratch.Reset()
	writeValue(&g.scratch, v, indent)
	return g.scratch.Len()
}

type imageTag struct {
	name, spec string
}

func (g *generator) pullSpec() string {
	const hex = "0123456789abcdef"
	var b strings.Builder
	b.WriteString("quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:")
	for i := 0; i < 64; i++ {
		b.WriteByte(hex[g.rng.IntN(16)])
	}
	return b.String()
}

// comp is one component being generated.
type comp struct {
	g          *generator
	name       string // file-name component
	noun       string
	namespace  string
	group      string
	level      int
	capability string
	combo      []string
	cvo        bool
	images     []imageTag
	files      []File
	seq        int // next file number
	objects    int // objects so far, for unique names
	namespaces int
	operators  int
	// crds are the platform CRDs (platform.go) the component still has to
	// write, in its lone-CRD files; hasConfig says whether it writes the
	// CRD of its configKind, and so may have objects of that kind.
	crds      []func(size int) map[string]any
	hasConfig bool
	// nsReach and configReach are the profiles of the objects in the
	// component's namespace and of its configKind: those of the namespace
	// and of the CRD.
	nsReach, configReach map[string]bool
}

// fileKinds counts the files of a component by kind.
type fileKinds struct {
	groups  int // CRD variant groups, one file per feature set
	lone    int // CRDs with one variant
	bundles int // files of several documents
	singles int // files of one object, namespace, Deployment and ClusterOperator included
}

// deal shares out the real payload's CRD variant groups, lone CRDs and
// multi-document files among the components (each draw weighted by the
// files a component has left), so that every replica has the real numbers
// of each; the rest of a component's files hold one object each.
func (g *generator) deal() []fileKinds {
	out := make([]fileKinds, len(components))
	free := make([]int, len(components))
	for i, c := range components {
		free[i] = c.files - min(c.files, 3) // namespace, Deployment, ClusterOperator
	}
	take := func(n, size int, add func(*fileKinds)) {
		for ; n > 0; n-- {
			total := 0
			for _, f := range free {
				if f >= size {
					total += f
				}
			}
			if total == 0 {
				return
			}
			x := g.rng.IntN(total)
			for i, f := range free {
				if f < size {
					continue
				}
				if x < f {
					add(&out[i])
					free[i] -= size
					break
				}
				x -= f
			}
		}
	}
	take(variantGroups, len(featureSets), func(k *fileKinds) { k.groups++ })
	take(loneCRDs, 1, func(k *fileKinds) { k.lone++ })
	take(multiDocFiles, 1, func(k *fileKinds) { k.bundles++ })
	for i, c := range components {
		out[i].singles = c.files - 5*out[i].groups - out[i].lone - out[i].bundles
	}
	return out
}

func (g *generator) component(name, noun string, level int, ro role, k fileKinds) *comp {
	cvo := ro == cvoRole
	c := &comp{g: g, name: name, noun: noun, namespace: "openshift-" + noun, group: noun + ".synthetic.openshift.io", level: level, cvo: cvo,
		nsReach: map[string]bool{}, configReach: map[string]bool{}}
	switch ro {
	case cvoRole:
		c.crds = append(c.crds, c.clusterOperatorCRD)
	case configRole:
		c.crds = append(c.crds, c.sccCRD)
	}
	if k.lone > len(c.crds) {
		c.crds = append(c.crds, c.operatorConfigCRD)
		c.hasConfig = true
	}
	for c.combo == nil {
		// Unannotated objects are single oddities, not whole components.
		c.combo = pick(g.rng, profileCombos)
	}
	if !cvo && g.rng.Float64() < componentCapability {
		c.capability = pick(g.rng, capabilities)
	}
	for i := 0; i < 1+g.rng.IntN(imagesPerComponent); i++ {
		tag := noun
		if i > 0 {
			tag = fmt.Sprintf("%s-operand-%d", noun, i)
		}
		c.images = append(c.images, imageTag{name: tag, spec: g.pullSpec()})
	}
	dir := "release-manifests"
	if cvo {
		dir = "manifests"
	}
	// Every component creates its namespace first (written last, when the
	// profiles of the objects in it are known); most run an operator
	// Deployment and report a ClusterOperator.
	later := []struct {
		name string
		obj  func() map[string]any
	}{{c.reserve(c.level, "namespace"), c.namespaceObject}}
	k.singles--
	if ro == configRole {
		c.addFile(dir, c.level, configNamespace+"-ns", c.configNamespaceObject())
		k.singles--
	}
	if k.singles >= 2 {
		c.addFile(dir, c.level, "deployment", c.object("Deployment"))
		c.addFile(dir, c.level, "clusteroperator", c.object("ClusterOperator"))
		k.singles -= 2
	}
	// The other files in a random order.
	var todo []byte
	for _, n := range []struct {
		kind byte
		n    int
	}{{'g', k.groups}, {'l', k.lone}, {'b', k.bundles}, {'s', k.singles}} {
		for i := 0; i < n.n; i++ {
			todo = append(todo, n.kind)
		}
	}
	g.rng.Shuffle(len(todo), func(i, j int) { todo[i], todo[j] = todo[j], todo[i] })
	for _, t := range todo {
		switch t {
		case 'g':
			// A group split three ways leaves two files to single objects.
			for n := c.variantGroup(dir); n < len(featureSets); n++ {
				c.single(dir)
			}
		case 'l':
			size := g.draw(&g.lone, loneCRDSizes)
			if len(c.crds) > 0 {
				crd := c.crds[0]
				later = append(later, struct {
					name string
					obj  func() map[string]any
				}{c.reserve(c.level, "crd"), func() map[string]any { return crd(size) }})
				c.crds = c.crds[1:]
				continue
			}
			c.addFile(dir, c.level, "crd", c.crd("", nil, size))
		case 'b':
			c.bundle(dir)
		default:
			c.single(dir)
		}
	}
	for _, l := range later {
		c.addFileNamed(dir, l.name, l.obj())
	}
	// Platform CRDs the lone-CRD files could not hold.
	for _, crd := range c.crds {
		c.addFile(dir, c.level, "crd", crd(g.draw(&g.lone, loneCRDSizes)))
	}
	return c
}

// single writes a file of one object.
func (c *comp) single(dir string) {
	kind := c.singleKind()
	c.addFile(dir, c.levelFor(kind), strings.ToLower(kind), c.object(kind))
}

// levelFor places monitoring objects at run level 90, as payloads do,
// and a few other files.
func (c *comp) levelFor(kinds ...string) int {
	share := otherAtLevel90
	for _, k := range kinds {
		if k == "ServiceMonitor" || k == "PrometheusRule" {
			share = monitoringAtLevel90
		}
	}
	if c.g.rng.Float64() < share {
		return 90
	}
	return c.level
}

func (c *comp) singleKind() string {
	ws := make([]weighted[string], 0, len(kinds))
	for _, k := range kinds {
		if k.kind != "Namespace" && (k.kind != "Custom" || c.hasConfig) {
			ws = append(ws, weighted[string]{k.kind, k.count})
		}
	}
	return pick(c.g.rng, ws)
}

// addFile writes objects as one file 0000_<level>_<component>_<NN>_<what>.
func (c *comp) addFile(dir string, level int, what string, objs ...map[string]any) {
	c.addFileNamed(dir, c.reserve(level, what), objs...)
}

// reserve returns the name of the next file, written later with
// addFileNamed.
func (c *comp) reserve(level int, what string) string {
	c.seq++
	return fmt.Sprintf("0000_%02d_%s_%02d_%s.yaml", level, c.name, c.seq-1, what)
}

func (c *comp) addFileNamed(dir, name string, objs ...map[string]any) {
	var b bytes.Buffer
	rng := c.g.rng
	if rng.Float64() < shareCommentPreamble {
		b.WriteString("# Generated by hack/gen-payload: synthetic content shaped like a release payload.\n---\n")
	}
	for i, o := range objs {
		if i > 0 {
			b.WriteString("---\n")
		}
		writeDocument(&b, o)
	}
	if len(objs) > 1 && rng.Float64() < shareTrailingEmptyDoc {
		b.WriteString("---\n")
	}
	c.files = append(c.files, File{Path: dir + "/" + name, Data: b.Bytes()})
}

// bundle writes a file of several documents.
func (c *comp) bundle(dir string) {
	rng := c.g.rng
	shape := pick(rng, bundles)
	var ks []string
	for _, k := range shape {
		if base, many := strings.CutSuffix(k, "*"); many {
			for n := 2 + rng.IntN(5); n > 0; n-- {
				ks = append(ks, base)
			}
			continue
		}
		ks = append(ks, k)
	}
	objs := make([]map[string]any, len(ks))
	for i, k := range ks {
		objs[i] = c.object(k)
	}
	c.addFile(dir, c.levelFor(ks...), strings.ToLower(ks[0])+"s", objs...)
}

// variantGroup writes one CRD in a file per feature set (or per group of
// them) and returns the number of files.
func (c *comp) variantGroup(dir string) int {
	rng := c.g.rng
	size := c.g.draw(&c.g.variant, variantCRDSizes)
	plural := c.plural()
	combo := pick(rng, variantCombos)
	variants := featureSets
	if rng.Float64() < threeVariants {
		variants = []string{"Default", "OKD", "CustomNoUpgrade,DevPreviewNoUpgrade,TechPreviewNoUpgrade"}
	}
	base := c.g.rng.Uint64()
	for _, v := range variants {
		// The variants share most of their schema: the same stream, then
		// a few fields more for the preview sets.
		extra := 0
		if v != "Default" && v != "OKD" {
			extra = size / 20
		}
		sub := &generator{rng: rand.New(rand.NewPCG(base, 7))}
		crd := c.crdWith(sub, plural, v, combo, size, extra)
		label := strings.SplitN(v, ",", 2)[0]
		if strings.Contains(v, ",") {
			label = "TechPreviewNoUpgrade"
		}
		c.addFileNamed(dir, fmt.Sprintf("0000_%02d_%s_%02d_%s-%s.crd.yaml", c.level, c.name, c.seq, plural, label), crd)
	}
	c.seq++
	return len(variants)
}

func (c *comp) plural() string {
	c.objects++
	return fmt.Sprintf("%s%d", words[c.g.rng.IntN(len(words))], c.objects)
}

func (c *comp) crd(featureSet string, combo []string, size int) map[string]any {
	return c.crdWith(c.g, c.plural(), featureSet, combo, size, 0)
}

// crdWith builds a CRD of about size bytes (plus extra) whose schema is
// drawn from g.
func (c *comp) crdWith(g *generator, plural, featureSet string, combo []string, size, extra int) map[string]any {
	kind := strings.ToUpper(plural[:1]) + plural[1:]
	spec, _ := g.schemaProps(max(size-1500, 300), 0, 16, true)
	if extra > 0 {
		more, _ := c.g.schemaProps(extra, 1, 16, true)
		for k, v := range more {
			spec[k+"Preview"] = v
		}
	}
	schema := map[string]any{
		"description": g.sentence(20, 60),
		"type":        "object",
		"properties": map[string]any{
			"apiVersion": map[string]any{"description": "APIVersion defines the versioned schema of this representation of an object.", "type": "string"},
			"kind":       map[string]any{"description": "Kind is a string value representing the REST resource this object represents.", "type": "string"},
			"metadata":   map[string]any{"type": "object"},
			"spec":       map[string]any{"description": g.sentence(10, 40), "type": "object", "properties": spec},
			"status":     map[string]any{"description": "status holds observed values.", "type": "object", "properties": map[string]any{"conditions": conditionsSchema()}},
		},
		"required": []any{"spec"},
	}
	ann := c.annotations("CustomResourceDefinition", featureSet, combo)
	if featureSet != "" {
		ann["api.openshift.io/merged-by-featuregates"] = "true"
	}
	return map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": plural + "." + c.group, "annotations": ann},
		"spec": map[string]any{
			"group": c.group,
			"names": map[string]any{"kind": kind, "listKind": kind + "List", "plural": plural, "singular": strings.ToLower(kind)},
			"scope": "Cluster",
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema":       map[string]any{"openAPIV3Schema": schema},
				"subresources": map[string]any{"status": map[string]any{}},
			}},
		},
	}
}

func conditionsSchema() map[string]any {
	return map[string]any{
		"type": "array",
		"items": map[string]any{"type": "object", "required": []any{"type", "status"}, "properties": map[string]any{
			"type":               map[string]any{"type": "string", "maxLength": 316},
			"status":             map[string]any{"type": "string", "enum": []any{"True", "False", "Unknown"}},
			"reason":             map[string]any{"type": "string", "maxLength": 1024},
			"message":            map[string]any{"type": "string", "maxLength": 32768},
			"lastTransitionTime": map[string]any{"type": "string", "format": "date-time"},
		}},
		"x-kubernetes-list-map-keys": []any{"type"},
		"x-kubernetes-list-type":     "map",
	}
}

// schemaProps returns OpenAPI properties of about budget bytes (written at
// depth), and their size. correlatable says whether the server can pair an
// object at this level with its old value (not below the items of a list
// that is not a map), which transition rules (oldSelf) need.
func (g *generator) schemaProps(budget, depth, indent int, correlatable bool) (map[string]any, int) {
	props := map[string]any{}
	used := 0
	rng := g.rng
	for used < budget {
		name := g.propName(props)
		var p map[string]any
		left := budget - used
		switch x := rng.Float64(); {
		case depth < 5 && left > 1200 && x < 0.25:
			sub, _ := g.schemaProps(min(left/2, 200+rng.IntN(left/2+1)), depth+1, indent+4, correlatable)
			p = map[string]any{"description": g.description(), "type": "object", "properties": sub}
			if rng.Float64() < 0.3 {
				if rule := g.rule(sub, correlatable); rule != nil {
					p["x-kubernetes-validations"] = []any{rule}
				}
			}
		case depth < 5 && left > 1200 && x < 0.35:
			sub, _ := g.schemaProps(min(left/2, 200+rng.IntN(left/3+1)), depth+1, indent+6, false)
			p = map[string]any{"description": g.description(), "type": "array", "maxItems": 16 + rng.IntN(100),
				"items": map[string]any{"type": "object", "properties": sub}, "x-kubernetes-list-type": "atomic"}
		case x < 0.55:
			p = map[string]any{"description": g.description(), "type": "string"}
			switch y := rng.Float64(); {
			case y < 0.25:
				enum := []any{}
				for n := 2 + rng.IntN(5); n > 0; n-- {
					w := words[rng.IntN(len(words))]
					enum = append(enum, strings.ToUpper(w[:1])+w[1:])
				}
				if rng.Float64() < shareBareEquals*5 {
					enum = append(enum, "=")
				}
				p["enum"] = enum
			case y < 0.45:
				p["maxLength"] = 63 + rng.IntN(1000)
				p["pattern"] = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
			}
		case x < 0.75:
			p = map[string]any{"description": g.description(), "type": "integer", "format": "int32", "minimum": 0, "maximum": 1 << (8 + rng.IntN(20))}
		case x < 0.85:
			p = map[string]any{"description": g.description(), "type": "boolean"}
		default:
			p = map[string]any{"description": g.description(), "type": "array", "items": map[string]any{"type": "string"}, "x-kubernetes-list-type": "set"}
		}
		props[name] = p
		used += len(name) + indent + 2 + g.size(p, indent)
	}
	return props, used
}

// rule returns an x-kubernetes-validations rule for an object whose
// properties are props, naming only those (CEL's self is the object the
// rule is attached to): where the level is correlatable, a transition rule
// as generated APIs have them (a field once set stays set); elsewhere,
// where oldSelf is not allowed, one field requires another. nil when
// there is no rule to write (one property, not correlatable).
func (g *generator) rule(props map[string]any, correlatable bool) map[string]any {
	names := sortedKeys(props)
	if len(names) == 0 {
		return nil
	}
	a := names[g.rng.IntN(len(names))]
	var rule string
	switch {
	case correlatable:
		rule = "has(self." + a + ") || !has(oldSelf." + a + ")"
	case len(names) > 1:
		b := names[g.rng.IntN(len(names))]
		for b == a {
			b = names[(slices.Index(names, b)+1)%len(names)]
		}
		rule = "!has(self." + a + ") || has(self." + b + ")"
	default:
		return nil
	}
	return map[string]any{"rule": rule, "message": g.sentence(4, 12)}
}

func (g *generator) propName(taken map[string]any) string {
	for {
		w := words[g.rng.IntN(len(words))]
		if g.rng.Float64() < 0.6 {
			v := words[g.rng.IntN(len(words))]
			w += strings.ToUpper(v[:1]) + v[1:]
		}
		if _, ok := taken[w]; !ok {
			return w
		}
	}
}

// description returns a property description: one to a few sentences,
// multi-line when long (as generated CRDs have them).
func (g *generator) description() string {
	n := 1 + g.rng.IntN(4)
	lines := make([]string, n)
	for i := range lines {
		lines[i] = g.sentence(6, 22)
	}
	return strings.Join(lines, "\n")
}

func (g *generator) sentence(minWords, maxWords int) string {
	n := minWords + g.rng.IntN(maxWords-minWords+1)
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		w := words[g.rng.IntN(len(words))]
		if i == 0 {
			w = strings.ToUpper(w[:1]) + w[1:]
		}
		b.WriteString(w)
	}
	b.WriteByte('.')
	return b.String()
}

// annotations draws the release annotations of one object of c.
func (c *comp) annotations(kind, featureSet string, variantCombo []string) map[string]any {
	rng := c.g.rng
	ann := map[string]any{}
	combo := c.combo
	switch {
	case c.cvo:
		// The CVO's manifests name the profile through the template.
		ann["include.release.openshift.io/{{ .ClusterProfile }}"] = "true"
		combo = nil
	case featureSet != "":
		combo = variantCombo
	case rng.Float64() < redrawCombo:
		combo = pick(rng, profileCombos)
	}
	if r := c.reach(kind); r != nil {
		for _, p := range combo {
			r[p] = true
		}
	}
	if !c.cvo && combo == nil {
		return ann
	}
	for _, p := range combo {
		ann["include.release.openshift.io/"+p] = "true"
	}
	if c.capability != "" {
		ann["capability.openshift.io/name"] = c.capability
	}
	switch {
	case featureSet != "":
		ann["release.openshift.io/feature-set"] = featureSet
	case kind != "Namespace" && rng.Float64() < shareTechPreviewOnly:
		ann["release.openshift.io/feature-set"] = "TechPreviewNoUpgrade"
	case kind != "Namespace" && rng.Float64() < shareFeatureGate:
		ann["release.openshift.io/feature-gate"] = featureGates[rng.IntN(len(featureGates))]
	}
	if rng.Float64() < shareExcludeHosted {
		ann["exclude.release.openshift.io/internal-openshift-hosted"] = "true"
	}
	if rng.Float64() < shareBootstrap {
		ann["release.openshift.io/bootstrap-required"] = "true"
	}
	if kind == "CustomResourceDefinition" && rng.Float64() < shareMajorVersion*8 {
		ann["release.openshift.io/major-version"] = "4,5,6,7,8,9,10"
	}
	switch x := rng.Float64(); {
	case kind == "CustomResourceDefinition" || kind == "Namespace":
	case x < shareCreateOnly:
		ann["release.openshift.io/create-only"] = "true"
	case x < shareCreateOnly+shareDelete:
		ann["release.openshift.io/delete"] = "true"
	}
	return ann
}

func (c *comp) objectName(kind string) string {
	c.objects++
	return fmt.Sprintf("%s-%s-%d", c.noun, strings.ToLower(kind), c.objects)
}

// object builds one object of kind of about its kind's size.
func (c *comp) object(kind string) map[string]any {
	rng := c.g.rng
	shape := kinds[0]
	for _, k := range kinds {
		if k.kind == kind {
			shape = k
		}
	}
	target := int(float64(shape.meanSize) * (0.5 + rng.Float64()))
	md := map[string]any{"name": c.objectName(kind)}
	apiVersion := shape.apiVersion
	switch kind {
	case "Namespace":
		// More namespaces than the component's own (namespaceObject).
		c.namespaces++
		md["name"] = fmt.Sprintf("%s-extra-%d", c.namespace, c.namespaces)
		md["labels"] = namespaceLabels()
		target = 0
	case "ClusterOperator":
		if c.operators == 0 {
			md["name"] = c.noun
		}
		c.operators++
	case "Custom":
		kind = c.configKind()
		apiVersion = c.group + "/v1"
		md["name"] = fmt.Sprintf("cluster-%d", c.objects)
	}
	if shape.namespaced && kind != "Namespace" {
		md["namespace"] = c.namespace
	}
	ann := c.annotations(kind, "", nil)
	if kind == "Namespace" {
		ann["openshift.io/node-selector"] = ""
		ann["workload.openshift.io/allowed"] = "management"
	}
	if len(ann) > 0 {
		md["annotations"] = ann
	}
	obj := map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": md}
	if kind == "Namespace" {
		return obj
	}
	if kind == "ConfigMap" && rng.Float64() < bigConfigMaps {
		target = 40000 + rng.IntN(66000)
	}
	c.fill(obj, kind, target)
	return obj
}

// fill gives obj the body of its kind, growing a list until the object is
// about target bytes.
func (c *comp) fill(obj map[string]any, kind string, target int) {
	g := c.g
	rng := g.rng
	used := g.size(obj, 0)
	grow := func(indent int, next func(i int) any) []any {
		var out []any
		for i := 0; used < target || i == 0; i++ {
			e := next(i)
			used += g.size([]any{e}, indent)
			out = append(out, e)
		}
		return out
	}
	name := obj["metadata"].(map[string]any)["name"].(string)
	switch kind {
	case "Deployment":
		image := c.images[0].spec
		if c.cvo {
			image = "{{.ReleaseImage}}"
		}
		container := map[string]any{
			"name": "operator", "image": image, "imagePullPolicy": "IfNotPresent",
			"command": []any{"/usr/bin/" + c.noun + "-operator"}, "args": []any{"start", "--config=/var/run/configmaps/config/config.yaml", "-v=2"},
			"resources":                map[string]any{"requests": map[string]any{"cpu": "10m", "memory": "50Mi"}},
			"terminationMessagePolicy": "FallbackToLogsOnError",
			"ports":                    []any{map[string]any{"containerPort": 8443, "name": "metrics"}},
			"volumeMounts":             []any{map[string]any{"mountPath": "/var/run/secrets/serving-cert", "name": "serving-cert"}},
		}
		if c.cvo {
			container["image"] = raw("'{{.ReleaseImage}}'")
		}
		obj["spec"] = map[string]any{
			"replicas": 1,
			"selector": map[string]any{"matchLabels": map[string]any{"name": c.noun + "-operator"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"name": c.noun + "-operator"}, "annotations": map[string]any{"target.workload.openshift.io/management": `{"effect": "PreferredDuringScheduling"}`}},
				"spec": map[string]any{
					"serviceAccountName": c.noun + "-operator", "priorityClassName": "system-cluster-critical",
					"nodeSelector": map[string]any{"node-role.kubernetes.io/master": ""},
					"tolerations": []any{
						map[string]any{"key": "node-role.kubernetes.io/master", "operator": "Exists", "effect": "NoSchedule"},
						map[string]any{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 120},
					},
					"volumes":    []any{map[string]any{"name": "serving-cert", "secret": map[string]any{"secretName": c.noun + "-serving-cert", "optional": true}}},
					"containers": []any{container},
				},
			},
		}
		env := grow(12, func(i int) any {
			if c.cvo && i == 0 {
				return map[string]any{"name": "CLUSTER_PROFILE", "value": raw("'{{ .ClusterProfile }}'")}
			}
			if i < len(c.images) {
				return map[string]any{"name": fmt.Sprintf("OPERAND_IMAGE_%d", i), "value": c.images[i].spec}
			}
			return map[string]any{"name": strings.ToUpper(words[rng.IntN(len(words))]) + fmt.Sprintf("_%d", i), "value": g.sentence(2, 8)}
		})
		container["env"] = env
	case "ClusterOperator":
		obj["spec"] = map[string]any{}
		obj["status"] = map[string]any{
			"versions": []any{map[string]any{"name": "operator", "version": "0.0.1-snapshot"}},
			"relatedObjects": grow(4, func(i int) any {
				return map[string]any{"group": "", "resource": "namespaces", "name": fmt.Sprintf("%s-%d", c.namespace, i)}
			}),
		}
	case "ConfigMap":
		var b strings.Builder
		for b.Len() < target-used {
			b.WriteString(g.sentence(8, 20))
			b.WriteByte('\n')
		}
		obj["data"] = map[string]any{"config.yaml": strings.TrimSuffix(b.String(), "\n")}
	case "ServiceAccount":
	case "Role", "ClusterRole":
		obj["rules"] = grow(0, func(int) any {
			return map[string]any{"apiGroups": []any{"", c.group}, "resources": []any{words[rng.IntN(len(words))] + "s", "configmaps"},
				"verbs": []any{"get", "list", "watch", "create", "update", "patch"}}
		})
	case "RoleBinding", "ClusterRoleBinding":
		roleKind := strings.TrimSuffix(kind, "Binding")
		obj["roleRef"] = map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": roleKind, "name": name}
		obj["subjects"] = grow(0, func(int) any {
			return map[string]any{"kind": "ServiceAccount", "name": c.noun + "-operator", "namespace": c.namespace}
		})
	case "Service":
		obj["spec"] = map[string]any{"selector": map[string]any{"name": c.noun + "-operator"}, "type": "ClusterIP",
			"ports": grow(4, func(i int) any {
				return map[string]any{"name": fmt.Sprintf("port-%d", i), "port": 8443 + i, "protocol": "TCP", "targetPort": 8443 + i}
			})}
	case "ServiceMonitor":
		obj["spec"] = map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"name": c.noun + "-operator"}},
			"endpoints": grow(4, func(int) any {
				return map[string]any{"port": "metrics", "scheme": "https", "interval": "30s", "bearerTokenFile": "/var/run/secrets/kubernetes.io/serviceaccount/token",
					"tlsConfig": map[string]any{"caFile": "/etc/prometheus/configmaps/serving-certs-ca-bundle/service-ca.crt", "serverName": "metrics." + c.namespace + ".svc"}}
			})}
	case "PrometheusRule":
		obj["spec"] = map[string]any{"groups": []any{map[string]any{"name": c.noun, "rules": grow(6, func(i int) any {
			desc := g.sentence(8, 30)
			if c.cvo {
				desc = "The " + words[rng.IntN(len(words))] + ` {{ "{{ $labels.name }}" }} operator ` + g.sentence(6, 20)
			}
			return map[string]any{"alert": fmt.Sprintf("%sAlert%d", strings.ToUpper(c.noun[:1])+strings.ReplaceAll(c.noun[1:], "-", ""), i),
				"expr": fmt.Sprintf("max by (namespace) (%s_errors_total{job=%q}) > %d", strings.ReplaceAll(c.noun, "-", "_"), c.noun, i),
				"for":  "10m", "labels": map[string]any{"severity": "warning"},
				"annotations": map[string]any{"summary": g.sentence(4, 10), "description": raw(desc)}}
		})}}}
	case "NetworkPolicy":
		obj["spec"] = map[string]any{"podSelector": map[string]any{"matchLabels": map[string]any{"name": c.noun + "-operator"}},
			"policyTypes": []any{"Ingress", "Egress"},
			"ingress": grow(4, func(i int) any {
				return map[string]any{"ports": []any{map[string]any{"port": 8443 + i, "protocol": "TCP"}}}
			}),
			"egress": []any{map[string]any{}}}
	case "CredentialsRequest":
		obj["spec"] = map[string]any{"secretRef": map[string]any{"name": c.noun + "-cloud-credentials", "namespace": c.namespace},
			"providerSpec": map[string]any{"apiVersion": "cloudcredential.openshift.io/v1", "kind": "AWSProviderSpec",
				"statementEntries": grow(6, func(int) any {
					return map[string]any{"effect": "Allow", "resource": "*", "action": []any{"ec2:Describe" + strings.ToUpper(words[rng.IntN(len(words))][:1]) + words[rng.IntN(len(words))][1:]}}
				})}}
	case "SecurityContextConstraints":
		obj["allowPrivilegedContainer"] = false
		obj["runAsUser"] = map[string]any{"type": "MustRunAsRange"}
		obj["seLinuxContext"] = map[string]any{"type": "MustRunAs"}
		obj["volumes"] = grow(0, func(i int) any {
			return []string{"configMap", "downwardAPI", "emptyDir", "persistentVolumeClaim", "projected", "secret"}[i%6]
		})
	case "FlowSchema":
		obj["spec"] = map[string]any{"matchingPrecedence": 1000 + rng.IntN(8000), "priorityLevelConfiguration": map[string]any{"name": "openshift-control-plane-operators"},
			"rules": grow(4, func(int) any {
				return map[string]any{"subjects": []any{map[string]any{"kind": "ServiceAccount", "serviceAccount": map[string]any{"name": c.noun + "-operator", "namespace": c.namespace}}},
					"resourceRules": []any{map[string]any{"apiGroups": []any{"*"}, "resources": []any{"*"}, "verbs": []any{"*"}, "clusterScope": true, "namespaces": []any{"*"}}}}
			})}
	default:
		obj["spec"] = map[string]any{"logLevel": "Normal", "operatorLogLevel": "Normal", "managementState": "Managed",
			"observedConfig": map[string]any{"settings": grow(6, func(int) any { return g.sentence(2, 6) })}}
	}
}

func releaseMetadata(version string) []byte {
	data, _ := json.MarshalIndent(map[string]any{"kind": "cincinnati-metadata-v0", "version": version, "previous": []string{}, "metadata": map[string]any{}}, "", "  ")
	return append(data, '\n')
}

func imageReferences(version string, images []imageTag) []byte {
	tags := make([]any, len(images))
	for i, im := range images {
		tags[i] = map[string]any{"name": im.name, "from": map[string]any{"kind": "DockerImage", "name": im.spec},
			"annotations": map[string]any{"io.openshift.build.source-location": "https://github.com/openshift/" + im.name}}
	}
	data, _ := json.MarshalIndent(map[string]any{"kind": "ImageStream", "apiVersion": "image.openshift.io/v1",
		"metadata": map[string]any{"name": version}, "spec": map[string]any{"tags": tags}}, "", "  ")
	return append(data, '\n')
}

// componentNames name the generated components (cluster-<name>-operator).
var componentNames = []string{
	"anvil", "beacon", "bellows", "bramble", "cairn", "capstan", "cinder", "compass", "cordage", "damper",
	"dovetail", "ember", "fathom", "ferrule", "flint", "gantry", "gimbal", "girder", "halyard", "harrow",
	"hawser", "jetty", "keel", "lantern", "lathe", "lintel", "mortar", "nacelle", "oakum", "pinion",
	"plinth", "quoin", "rampart", "ratchet", "rivet", "sextant", "sluice", "spindle", "tackle", "tiller",
	"trellis", "winch",
}

// words are the vocabulary of names and descriptions.
var words = []string{
	"address", "allocation", "annotation", "backoff", "bucket", "certificate", "channel", "cluster", "condition",
	"config", "connection", "container", "controller", "credential", "daemon", "deadline", "default", "delay",
	"domain", "driver", "endpoint", "entry", "event", "field", "filter", "gateway", "generation", "handler",
	"header", "health", "image", "index", "ingress", "instance", "interval", "issuer", "key", "label", "lease",
	"limit", "listener", "mapping", "member", "metric", "mirror", "mode", "network", "node", "object", "operator",
	"option", "owner", "path", "peer", "period", "policy", "pool", "port", "prefix", "priority", "probe",
	"profile", "protocol", "provider", "proxy", "quota", "reason", "record", "region", "registry", "replica",
	"request", "resource", "retention", "revision", "role", "route", "rule", "schedule", "scope", "secret",
	"selector", "server", "service", "session", "setting", "source", "spec", "storage", "strategy", "subnet",
	"target", "template", "threshold", "timeout", "token", "topology", "traffic", "upstream", "version",
	"volume", "webhook", "weight", "window", "zone",
}
