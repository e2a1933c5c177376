package payload

import (
	"bytes"
	"errors"
	"fmt"
	"text/template"

	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/profiles"
)

// templateData is what manifests/ templates see.
type templateData struct {
	ReleaseImage   string
	ClusterProfile string
	Images         map[string]string
}

func (p *Payload) renderTemplates(profile string) ([]*File, []manifest.Finding, []error) {
	if profile == "" {
		profile = profiles.Default
	}
	data := templateData{ReleaseImage: p.opts.ReleaseImage, ClusterProfile: profile, Images: p.Images()}
	if data.ReleaseImage == "" && p.Release != nil {
		data.ReleaseImage = "quay.io/openshift-release-dev/ocp-release:" + p.Release.Version
	}
	var files []*File
	var findings []manifest.Finding
	var errs []error
	for _, rf := range p.cvoFiles {
		out, err := renderTemplate(rf.path, rf.data, data, p.maxFileSize())
		if errors.Is(err, manifest.ErrLimit) {
			errs = append(errs, &manifest.ParseError{File: rf.path, Doc: -1, Err: err})
			continue
		}
		if err != nil {
			findings = append(findings, manifest.Finding{File: rf.path, Doc: -1, Severity: manifest.SeverityWarning,
				Message: fmt.Sprintf("skipped: template did not render: %v", err)})
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

func renderTemplate(name string, in []byte, data templateData, max int64) ([]byte, error) {
	if !isTemplate(in) {
		return in, nil
	}
	t, err := template.New(name).Parse(string(in))
	if err != nil {
		return nil, err
	}
	w := &limitedBuffer{max: max}
	if err := t.Execute(w, data); err != nil {
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
