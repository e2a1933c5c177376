package payload

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/profiles"
)

// TemplateLimits bound the work of rendering one manifests/ template, so
// that a template that loops without writing ({{range 1000000000000}}), nests
// ranges that multiply out, recurses, or builds huge strings without
// printing them stops at once with an error naming the file. The rendered
// output is bounded by the file size limit (LoadOptions.Limits). A zero
// field takes its value from DefaultTemplateLimits.
type TemplateLimits struct {
	// MaxOperations bounds the loop iterations, template calls and
	// function calls of one file's execution, together.
	MaxOperations int64
	// MaxTime bounds one file's execution (a backstop for operations that
	// are each slow).
	MaxTime time.Duration
	// MaxNesting bounds how deeply control structures ({{if}}, {{range}},
	// {{with}}, {{define}}, {{block}}, and each {{else if}}) nest, which
	// the template parser follows by recursion.
	MaxNesting int
}

// DefaultTemplateLimits returns a million operations, 5 s and 100 levels
// of nesting per file. The real payload's templates take at most a few
// dozen operations and nest 3 levels deep; a million empty loop iterations
// take about 0.2 s.
func DefaultTemplateLimits() TemplateLimits {
	return TemplateLimits{MaxOperations: 1_000_000, MaxTime: 5 * time.Second, MaxNesting: 100}
}

func (l TemplateLimits) withDefaults() TemplateLimits {
	d := DefaultTemplateLimits()
	if l.MaxOperations <= 0 {
		l.MaxOperations = d.MaxOperations
	}
	if l.MaxTime <= 0 {
		l.MaxTime = d.MaxTime
	}
	if l.MaxNesting <= 0 {
		l.MaxNesting = d.MaxNesting
	}
	return l
}

// ErrMissingImage is wrapped by the error of a template that names an
// image image-references does not have ({{index .Images "x"}} or
// {{.Images.x}}): the CVO would render an empty pull spec, and the
// cluster would get a workload that cannot start.
var ErrMissingImage = errors.New("image-references has no such tag")

// TemplateData is what manifests/ templates see.
type TemplateData struct {
	// ReleaseImage is {{.ReleaseImage}}.
	ReleaseImage string
	// ClusterProfile is {{.ClusterProfile}}.
	ClusterProfile string
	// Images maps image-references tags to pull specs: {{index .Images
	// "tag"}} or {{.Images.tag}}; a tag it lacks is an error wrapping
	// ErrMissingImage.
	Images Images
}

// Images maps image-references tag names to pull specs.
type Images map[string]string

func (p *Payload) renderTemplates(ctx context.Context, profile string) ([]*File, []manifest.Finding, []error) {
	if profile == "" {
		profile = profiles.Default
	}
	data := TemplateData{ReleaseImage: p.opts.ReleaseImage, ClusterProfile: profile, Images: p.Images()}
	if data.ReleaseImage == "" && p.Release != nil {
		data.ReleaseImage = "quay.io/openshift-release-dev/ocp-release:" + p.Release.Version
	}
	opts := RenderOptions{MaxSize: p.maxFileSize(), Limits: p.opts.Template}
	var files []*File
	var findings []manifest.Finding
	var errs []error
	for _, rf := range p.cvoFiles {
		if err := ctx.Err(); err != nil {
			return nil, nil, append(errs, err)
		}
		out, err := RenderTemplate(ctx, rf.path, rf.data, data, opts)
		if err != nil && ctx.Err() != nil {
			return nil, nil, append(errs, ctx.Err())
		}
		// Every template error fails the load, as the CVO's render fails
		// on one (pkg/payload/render.go, renderDir).
		if errors.Is(err, manifest.ErrLimit) || errors.Is(err, ErrMissingImage) {
			errs = append(errs, &manifest.ParseError{File: rf.path, Doc: -1, Err: err})
			continue
		}
		if err != nil {
			errs = append(errs, &manifest.ParseError{File: rf.path, Doc: -1, Err: fmt.Errorf("template did not render (the CVO fails its render on it): %w", err)})
			continue
		}
		files = append(files, &File{Path: rf.path, Data: out})
	}
	return files, findings, errs
}

// isTemplate reports whether a manifests/ file has template actions.
func isTemplate(data []byte) bool {
	return bytes.Contains(data, []byte("{{"))
}

// IsTemplate reports whether a manifests/ file is a Go template (it has
// "{{"), which Load renders before parsing, so that its parse is never kept
// in LoadOptions.Parsed.
func IsTemplate(data []byte) bool { return isTemplate(data) }

// RenderOptions bound RenderTemplate.
type RenderOptions struct {
	// MaxSize bounds the rendered output, in bytes; 0 means
	// manifest.DefaultLimits().MaxFileSize.
	MaxSize int64
	// Limits bound the work (zero fields: DefaultTemplateLimits).
	Limits TemplateLimits
}

// RenderTemplate renders one manifests/ file named name (text without
// "{{" comes back as it is) with Go's text/template, as the CVO does, but
// within budgets: output above opts.MaxSize, more than
// opts.Limits.MaxOperations loop iterations, template and function calls,
// nesting deeper than MaxNesting, and execution past MaxTime are errors
// wrapping a *manifest.LimitError; a string a function would build above
// MaxSize is refused before it is built; an image image-references lacks
// is an error wrapping ErrMissingImage; ctx ending stops the execution
// (within a few thousand operations) with ctx's error. Other template
// errors (syntax, a field .X the data lacks) are returned as they are.
func RenderTemplate(ctx context.Context, name string, in []byte, data TemplateData, opts RenderOptions) ([]byte, error) {
	if !isTemplate(in) {
		return in, nil
	}
	max := opts.MaxSize
	if max <= 0 {
		max = manifest.DefaultLimits().MaxFileSize
	}
	limits := opts.Limits.withDefaults()
	if depth := templateNesting(in, limits.MaxNesting); depth > limits.MaxNesting {
		return nil, &manifest.LimitError{What: "template nesting", Size: int64(depth), Limit: int64(limits.MaxNesting)}
	}
	b := newBudget(ctx, name, limits, max)
	t, err := b.parse(string(in))
	if err != nil {
		return nil, err
	}
	w := &limitedBuffer{max: max}
	if err := b.execute(t, w, data); err != nil {
		return nil, err
	}
	return w.buf.Bytes(), nil
}

// limitedBuffer fails writes past max bytes, so that a template whose
// nested ranges multiply out is stopped early.
type limitedBuffer struct {
	buf bytes.Buffer
	max int64
}

func (w *limitedBuffer) Write(p []byte) (int, error) {
	if int64(w.buf.Len()+len(p)) > w.max {
		return 0, &manifest.LimitError{What: "rendered file size", Size: int64(w.buf.Len() + len(p)), Limit: w.max}
	}
	return w.buf.Write(p)
}
