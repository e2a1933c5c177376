package payload

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/payload-apply/payload-apply/internal/realpayload"
	"github.com/payload-apply/payload-apply/lib/manifest"
)

// FuzzRenderTemplate holds the budgeted renderer to text/template: for
// any template text it returns within its time limit (and a margin), its
// output stays within the size limit, a failure is either a limit
// (*manifest.LimitError), an image image-references lacks, or what
// text/template itself says; and when it renders, text/template renders the
// same bytes without error (safe to run then: the work was within the
// budget).
func FuzzRenderTemplate(f *testing.F) {
	for _, s := range fidelitySeeds {
		f.Add(s)
	}
	for _, s := range []string{
		"{{range 1000000000000}}{{end}}",
		"{{$n := 1000000000000}}{{range $n}}{{end}}",
		nest("{{range $.Images}}", "x", "{{end}}", 8),
		`{{define "a"}}{{template "a" .}}{{end}}{{template "a" .}}`,
		chain(20) + `{{template "t0" .}}`,
		`{{$x := printf "%0999999999d" 0}}`,
		`{{$s := "0123456789"}}{{range 100}}{{$s = printf "%s%s" $s $s}}{{end}}`,
		nest("{{if 1}}", "", "{{end}}", 200),
		"{{if 0}}" + strings.Repeat("{{else if 0}}", 200) + "{{end}}",
		`{{index .Images "missing"}}`,
		`{{.Images.missing}}`,
	} {
		f.Add(s)
	}
	// The real payload's templates.
	for _, file := range realpayload.Sample(f, 0, 1<<20) {
		if strings.HasPrefix(file.Path, ManifestDir+"/") && isTemplate(file.Data) {
			f.Add(string(file.Data))
		}
	}
	const maxSize = 64 << 10
	limits := TemplateLimits{MaxOperations: 20_000, MaxTime: time.Second, MaxNesting: 50}
	f.Fuzz(func(t *testing.T, text string) {
		start := time.Now()
		out, err := RenderTemplate(context.Background(), "manifests/f.yaml", []byte(text), testData(), RenderOptions{MaxSize: maxSize, Limits: limits})
		if took := time.Since(start); took > limits.MaxTime+2*time.Second {
			t.Fatalf("took %s, limit %s", took, limits.MaxTime)
		}
		if len(out) > maxSize {
			t.Fatalf("rendered %d bytes, limit %d", len(out), maxSize)
		}
		var le *manifest.LimitError
		if err != nil {
			if errors.As(err, &le) || errors.Is(err, ErrMissingImage) {
				return
			}
			if strings.Contains(err.Error(), "payloadApply") {
				t.Fatalf("the error shows the counting functions: %v", err)
			}
			return
		}
		want, wantErr := plainRender(text)
		if wantErr != nil {
			t.Fatalf("rendered %q, text/template fails: %v", out, wantErr)
		}
		if !isTemplate([]byte(text)) {
			want = []byte(text)
		}
		if !bytes.Equal(out, want) {
			t.Fatalf("rendered\n%q\ntext/template renders\n%q", out, want)
		}
	})
}
