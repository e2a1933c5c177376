package plan

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/payload-apply/payload-apply/lib/diff"
	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/lib/overlay"
	"github.com/payload-apply/payload-apply/lib/safefs"
	"github.com/payload-apply/payload-apply/payload"
)

// MarshalObject returns the object as YAML (keys sorted, as kubectl prints).
func MarshalObject(m *manifest.Manifest) ([]byte, error) {
	out, err := manifest.MarshalYAML(m.Obj.Object)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: marshal: %w", m.Position(), m.ID(), err)
	}
	return out, nil
}

// Unstructured returns the objects of Objects, in the same order: what
// apply, diff and rbac hand to the cluster side.
func (p *Plan) Unstructured() []*unstructured.Unstructured {
	objs := make([]*unstructured.Unstructured, len(p.Objects))
	for i, m := range p.Objects {
		objs[i] = m.Obj
	}
	return objs
}

// Rendered returns what render shows, in apply order: Objects, and the
// objects the components' apply-time steps write (StepSpec.Preview), placed
// by their File among them. Only Objects are applied as they are.
func (p *Plan) Rendered() []*manifest.Manifest {
	var previews []*manifest.Manifest
	for _, s := range p.Steps {
		previews = append(previews, s.Preview...)
	}
	if len(previews) == 0 {
		return p.Objects
	}
	all := make([]*manifest.Manifest, 0, len(p.Objects)+len(previews))
	return payload.SortForApply(append(append(all, p.Objects...), previews...))
}

// Unmanaged returns the manifests the selection would include but for an
// unmanaged override (Options.Overrides), in load order: the CVO leaves
// them as they are on the cluster, and so does everything here.
func (p *Plan) Unmanaged() []*manifest.Manifest {
	var out []*manifest.Manifest
	for _, e := range p.Selection.Entries {
		if e.Reason == manifest.ReasonOverridden {
			out = append(out, e.Manifest)
		}
	}
	return out
}

// WriteYAML writes the rendered objects (see Rendered) in apply order as one
// multi-document YAML stream, each document headed by a "# Source: FILE#DOC"
// comment. Nothing is written when an object cannot be encoded.
func (p *Plan) WriteYAML(w io.Writer) error {
	objs := p.Rendered()
	docs, err := p.marshalAll(objs)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	for i, m := range objs {
		bw.WriteString("---\n# Source: ")
		bw.WriteString(m.Position())
		bw.WriteByte('\n')
		bw.Write(docs[i])
	}
	return bw.Flush()
}

// marshalAll returns the YAML of objs, encoded on all cores (see
// MarshalObject), or the first error in object order.
func (p *Plan) marshalAll(objs []*manifest.Manifest) ([][]byte, error) {
	docs := make([][]byte, len(objs))
	errs := make([]error, len(objs))
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, m := range objs {
		g.Go(func() error {
			docs[i], errs[i] = p.cache.marshal(m)
			return nil
		})
	}
	_ = g.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return docs, nil
}

// WriteList writes one line per object in apply order:
// RUNLEVEL<TAB>COMPONENT<TAB>FILE<TAB>APIVERSION<TAB>KIND<TAB>NAMESPACE<TAB>NAME.
// RUNLEVEL and COMPONENT are "-" for files whose names do not parse. It
// lists the rendered objects (see Rendered). A field with a tab, a newline,
// an escape sequence or another character a terminal would not show as it
// is, a double quote or a backslash, is quoted (manifest.QuoteName), so that
// a record is always one line of seven fields.
func (p *Plan) WriteList(w io.Writer) error {
	var b bytes.Buffer
	for _, m := range p.Rendered() {
		level, comp := "-", "-"
		if l, c, ok := payload.ParseFileName(m.OriginalFilename); ok {
			level, comp = fmt.Sprintf("%02d", l), c
		}
		q := manifest.QuoteName
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", level, q(comp), q(m.File), q(m.Obj.GetAPIVersion()), q(m.GVK.Kind), q(m.Obj.GetNamespace()), q(m.Obj.GetName()))
	}
	_, err := w.Write(b.Bytes())
	return err
}

// WriteExplain writes one line per manifest of the payload in load order:
// DECISION<TAB>FILE#DOC<TAB>Kind/ns/name<TAB>DETAIL, where DECISION is
// "included" (DETAIL: the annotation that matched, and the overlays that
// changed the object), "excluded" (DETAIL: the reason), "unmanaged"
// (included but for an unmanaged override of the cluster's ClusterVersion)
// or "deleted" (included, then removed by an overlay). Then one line per object an
// overlay added ("added", DETAIL: the overlay) and per object the tool
// generated ("generated", DETAIL: what for).
func (p *Plan) WriteExplain(w io.Writer) error {
	changed := map[*manifest.Manifest][]string{}
	deleted := map[*manifest.Manifest]string{}
	for _, c := range p.OverlayChanges {
		switch {
		case c.Source == nil:
		case c.Action == overlay.Modified:
			changed[c.Source] = append(changed[c.Source], c.Overlay)
		case c.Action == overlay.Deleted:
			deleted[c.Source] = c.Overlay
		}
	}
	var b bytes.Buffer
	for _, e := range p.Selection.Entries {
		decision, detail := "excluded", e.Reason
		if e.Reason == manifest.ReasonOverridden {
			decision, detail = "unmanaged", "ClusterVersion spec.overrides: unmanaged: true; left as it is"
		}
		if e.Included {
			decision, detail = "included", e.Matched
			if detail == "" {
				detail = "no profile filter"
			}
			if ovs := changed[e.Manifest]; len(ovs) > 0 {
				detail += "; changed by overlay " + strings.Join(ovs, ", ")
			}
			if ov, ok := deleted[e.Manifest]; ok {
				decision, detail = "deleted", detail+"; deleted by overlay "+ov
			}
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\n", decision, e.Manifest.Position(), manifest.QuoteName(e.Manifest.ID().String()), manifest.Printable(detail))
	}
	for _, c := range p.OverlayChanges {
		if c.Action == overlay.Added {
			fmt.Fprintf(&b, "added\t%s\t%s\toverlay %s\n", c.Object.Position(), c.Object.ID(), c.Overlay)
		}
	}
	for _, m := range p.Generated {
		fmt.Fprintf(&b, "generated\t%s\t%s\trecords profile %s for the cluster\n", m.Position(), m.ID(), p.Profile)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// WriteDir writes the rendered objects (see Rendered) under dir, one file
// per source file at the source's relative path (manifests/...,
// release-manifests/..., generated/...), documents in apply order. Files of the source that lost all their objects are not
// written; nothing else in dir is touched. Writes are confined to dir
// (lib/safefs.Output): a name or a symbolic link inside dir that leads
// out of it is an error wrapping safefs.ErrEscapes, and a file is
// replaced by rename, never written through a link or a named pipe. .json sources are written as a
// stream of indented JSON objects, everything else as YAML.
func (p *Plan) WriteDir(dir string) ([]string, error) {
	var order []string
	byFile := map[string][]*manifest.Manifest{}
	for _, m := range p.Rendered() {
		if _, ok := byFile[m.File]; !ok {
			order = append(order, m.File)
		}
		byFile[m.File] = append(byFile[m.File], m)
	}
	var all []*manifest.Manifest
	for _, file := range order {
		if path.Ext(file) != ".json" {
			all = append(all, byFile[file]...)
		}
	}
	docs, err := p.marshalAll(all)
	if err != nil {
		return nil, err
	}
	yamlOf := make(map[*manifest.Manifest][]byte, len(all))
	for i, m := range all {
		yamlOf[m] = docs[i]
	}
	out, err := safefs.CreateOutput(dir)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	var written []string
	for _, file := range order {
		var b bytes.Buffer
		for i, m := range byFile[file] {
			if path.Ext(file) == ".json" {
				data, err := json.MarshalIndent(m.Obj.Object, "", "  ")
				if err != nil {
					return written, fmt.Errorf("%s: %s: marshal: %w", m.Position(), m.ID(), err)
				}
				b.Write(data)
				b.WriteByte('\n')
				continue
			}
			data := yamlOf[m]
			if i > 0 {
				b.WriteString("---\n")
			}
			b.Write(data)
		}
		// Confined to dir: neither the name nor a symbolic link inside
		// dir leads a write out of it (lib/safefs.Output).
		if err := out.WriteFile(file, b.Bytes(), 0o644); err != nil {
			return written, err
		}
		written = append(written, filepath.Join(dir, filepath.FromSlash(path.Clean(file))))
	}
	return written, nil
}

// DiffObjects returns the plan's objects as lib/diff compares them, each
// placed by its run level and component (RunLevel -1 and no component for
// a file name that does not parse).
func (p *Plan) DiffObjects() []diff.Object {
	out := make([]diff.Object, len(p.Objects))
	for i, m := range p.Objects {
		level, comp, _ := payload.ParseFileName(m.OriginalFilename)
		out[i] = diff.Object{Obj: m.Obj, File: m.Position(), RunLevel: level, Component: comp}
	}
	return out
}
