package payload

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

var templateImages = Images{"cli": "quay.io/x/cli@sha256:1", "oauth": "quay.io/x/oauth@sha256:2", "router": "quay.io/x/router@sha256:3", "vpn": "quay.io/x/vpn@sha256:4"}

func testData() TemplateData {
	return TemplateData{ReleaseImage: "quay.io/x/release:4.99", ClusterProfile: "self-managed-high-availability", Images: templateImages}
}

// nest wraps body in n copies of open ... close.
func nest(open, body, close string, n int) string {
	return strings.Repeat(open, n) + body + strings.Repeat(close, n)
}

// allocated runs f and returns the bytes the process allocated meanwhile
// (an upper bound of what f held at its peak; the cases run one at a
// time).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestRenderTemplateBudget feeds templates that would run for hours,
// recurse, or build gigabytes without writing them: each must stop with
// its limit's error, fast, having allocated little.
func TestRenderTemplateBudget(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		opts    RenderOptions
		limit   string // the LimitError's What
		maxTime time.Duration
		maxMem  uint64
	}{
		{name: "range over a huge integer, writing nothing", text: "{{range 1000000000000}}{{end}}", limit: "template operations"},
		{name: "range over a huge integer in a variable", text: "{{$n := 1000000000000}}{{range $n}}{{end}}", limit: "template operations"},
		{name: "range over a huge integer with a variable", text: "{{range $i := 1000000000000}}{{end}}", limit: "template operations"},
		{name: "range over a huge integer in a with", text: "{{with 1000000000000}}{{range .}}{{end}}{{end}}", limit: "template operations"},
		{name: "nested ranges over .Images writing nothing", text: nest("{{range $.Images}}", "", "{{end}}", 12), limit: "template operations"},
		{name: "nested ranges over .Images with variables", text: nest("{{range $k, $v := $.Images}}", "", "{{end}}", 12), limit: "template operations"},
		{name: "nested ranges over .Images writing", text: nest("{{range $.Images}}", "x", "{{end}}", 12), limit: "template operations"},
		{name: "nested ranges writing a lot", text: nest("{{range $.Images}}", "{{$.ReleaseImage}}{{$.ReleaseImage}}", "{{end}}", 9),
			opts: RenderOptions{MaxSize: 1 << 20}, limit: "rendered file size"},
		{name: "recursive template", text: `{{define "a"}}{{template "a" .}}{{end}}{{template "a" .}}`, limit: "template operations",
			opts: RenderOptions{Limits: TemplateLimits{MaxOperations: 10_000}}},
		{name: "recursive template without data", text: `{{define "a"}}{{template "a"}}{{end}}{{template "a"}}`, limit: "template operations",
			opts: RenderOptions{Limits: TemplateLimits{MaxOperations: 10_000}}},
		{name: "templates calling each other twice, 40 deep", text: chain(40) + `{{template "t0" .}}`, limit: "template operations"},
		{name: "recursive template, default limits", text: `{{define "a"}}{{template "a" .}}{{end}}{{template "a" .}}`, limit: "template call depth"},
		{name: "block recursion", text: `{{block "b" .}}{{template "b" .}}{{end}}`, limit: "template operations",
			opts: RenderOptions{Limits: TemplateLimits{MaxOperations: 10_000}}},
		{name: "printf with a huge width", text: `{{$x := printf "%0999999999d" 0}}`, limit: "template string size"},
		{name: "printf with a huge precision", text: `{{$x := printf "%.999999999f" 1.0}}`, limit: "template string size"},
		{name: "printf with a huge width argument", text: `{{$x := printf "%*d" 999999999 0}}`, limit: "template string size"},
		{name: "string doubled in a loop", text: `{{$s := "0123456789"}}{{range 100}}{{$s = printf "%s%s" $s $s}}{{end}}`, limit: "template string size"},
		{name: "print doubling", text: `{{$s := "0123456789"}}{{range 100}}{{$s = print $s $s}}{{end}}`, limit: "template string size"},
		{name: "html growing", text: `{{$s := "<<<<<<<<<<"}}{{range 100}}{{$s = html $s $s}}{{end}}`, limit: "template string size"},
		{name: "nested ifs", text: nest("{{if 1}}", "", "{{end}}", 100_000), limit: "template nesting"},
		{name: "nested withs", text: nest("{{with .}}", "", "{{end}}", 5_000), limit: "template nesting"},
		{name: "else-if chain", text: "{{if 0}}" + strings.Repeat("{{else if 0}}", 100_000) + "{{end}}", limit: "template nesting"},
		{name: "nested ranges, deeper than the nesting limit", text: nest("{{range 1}}", "", "{{end}}", 101), limit: "template nesting"},
		{name: "nested ifs with trim markers", text: nest("{{- if 1 -}}", "", "{{- end -}}", 1000), limit: "template nesting"},
		{name: "a slow loop under a time limit", text: `{{range 1000000000000}}{{printf "%s" $.ReleaseImage}}{{end}}`, limit: "template time",
			opts: RenderOptions{MaxSize: 1 << 40, Limits: TemplateLimits{MaxOperations: 1 << 62, MaxTime: 300 * time.Millisecond}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			maxTime, maxMem := tc.maxTime, tc.maxMem
			if maxTime == 0 {
				maxTime = 5 * time.Second
			}
			if maxMem == 0 {
				maxMem = 256 << 20
			}
			// A tenth of the default operations: the same mechanism, a
			// tenth of the time (the race detector makes each operation
			// about ten times slower). The call depth case keeps the
			// default: text/template's own depth limit comes first.
			opts := tc.opts
			if opts.Limits.MaxOperations == 0 && tc.limit != "template call depth" {
				opts.Limits.MaxOperations = 100_000
			}
			var err error
			var took time.Duration
			done := make(chan struct{})
			var mem uint64
			go func() {
				defer close(done)
				mem = allocated(func() {
					start := time.Now()
					_, err = RenderTemplate(context.Background(), "manifests/x.yaml", []byte(tc.text), testData(), opts)
					took = time.Since(start)
				})
			}()
			select {
			case <-done:
			case <-time.After(4 * maxTime):
				t.Fatalf("did not stop within %s", 4*maxTime)
			}
			var le *manifest.LimitError
			if !errors.As(err, &le) || le.What != tc.limit {
				t.Fatalf("error %v, want the %q limit", err, tc.limit)
			}
			if !errors.Is(err, manifest.ErrLimit) {
				t.Errorf("error %v does not wrap manifest.ErrLimit", err)
			}
			if took > maxTime {
				t.Errorf("took %s, want at most %s", took, maxTime)
			}
			if mem > maxMem {
				t.Errorf("allocated %d MiB, want at most %d MiB", mem>>20, maxMem>>20)
			}
		})
	}
}

// chain defines t0 ... t(n-1), each calling the next twice: 2^n calls.
func chain(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(`{{define "t` + strconv.Itoa(i) + `"}}`)
		if i+1 < n {
			b.WriteString(`{{template "t` + strconv.Itoa(i+1) + `" .}}{{template "t` + strconv.Itoa(i+1) + `" .}}`)
		}
		b.WriteString(`{{end}}`)
	}
	return b.String()
}

func TestRenderTemplateCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	_, err := RenderTemplate(ctx, "manifests/x.yaml", []byte("{{range 1000000000000}}{{end}}"), testData(),
		RenderOptions{Limits: TemplateLimits{MaxOperations: 1 << 62, MaxTime: time.Hour}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if took := time.Since(start); took > time.Second+200*time.Millisecond {
		t.Errorf("stopped %s after the cancel, want within a second", took-200*time.Millisecond)
	}
}

// TestRenderTemplateMissingImage: a tag image-references lacks is an
// error, however the template names it, never "" or "<no value>".
func TestRenderTemplateMissingImage(t *testing.T) {
	tests := []struct{ name, text string }{
		{"index", `image: {{index .Images "missing"}}`},
		{"field", `image: {{.Images.missing}}`},
		{"index in a pipeline", `image: {{index .Images "missing" | printf "%s"}}`},
		{"index in a variable", `{{$i := index .Images "missing"}}image: {{$i}}`},
		{"index through a variable map", `{{$m := .Images}}image: {{index $m "missing"}}`},
		{"field in a with", `{{with .Images}}image: {{.missing}}{{end}}`},
		{"index in a range", `{{range $k, $v := .Images}}{{index $.Images (printf "%s-x" $k)}}{{end}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := RenderTemplate(context.Background(), "manifests/x.yaml", []byte(tc.text), testData(), RenderOptions{})
			if !errors.Is(err, ErrMissingImage) {
				t.Fatalf("rendered %q, %v; want an error wrapping ErrMissingImage", out, err)
			}
		})
	}
	data := testData()
	data.Images = nil
	if out, err := RenderTemplate(context.Background(), "manifests/x.yaml", []byte(`{{index .Images "cli"}}`), data, RenderOptions{}); !errors.Is(err, ErrMissingImage) {
		t.Errorf("without image-references: %q, %v; want ErrMissingImage", out, err)
	}
}

// TestRenderTemplateFidelity: templates within their budget render as
// text/template renders them.
func TestRenderTemplateFidelity(t *testing.T) {
	for _, text := range fidelitySeeds {
		t.Run(text, func(t *testing.T) {
			got, err := RenderTemplate(context.Background(), "manifests/x.yaml", []byte(text), testData(), RenderOptions{})
			want, wantErr := plainRender(text)
			if (err != nil) != (wantErr != nil) {
				t.Fatalf("error %v, text/template's %v", err, wantErr)
			}
			if err == nil && !bytes.Equal(got, want) {
				t.Errorf("rendered\n%s\ntext/template renders\n%s", got, want)
			}
		})
	}
}

var fidelitySeeds = []string{
	"image: {{.ReleaseImage}}\nprofile: {{.ClusterProfile}}\n",
	`image: {{index .Images "cli"}}`,
	`image: {{.Images.router}}`,
	`{{range .Images}}- {{.}}
{{end}}`,
	`{{range $k, $v := .Images}}{{$k}}={{$v}};{{end}}`,
	`{{range $v := .Images}}{{$v}},{{end}}`,
	`{{range $i, $e := 3}}{{end}}`,
	`{{range 3}}{{.}}{{end}}`,
	`{{range $i := 5}}{{if eq $i 2}}{{continue}}{{end}}{{if eq $i 4}}{{break}}{{end}}{{$i}}{{end}}`,
	`{{range 0}}x{{else}}empty{{end}}`,
	`{{range .Missing}}x{{end}}`,
	`{{range $k, $v := .Images}}{{range $.Images}}{{$k}}{{end}}{{end}}`,
	`{{define "img"}}[{{.}}]{{end}}{{range .Images}}{{template "img" .}}{{end}}`,
	`{{define "x"}}{{.ClusterProfile}}{{end}}{{template "x" .}}{{template "x"}}`,
	`{{block "b" .}}{{.ReleaseImage}}{{end}}`,
	`{{printf "%s/%d/%q" .ReleaseImage 3 "x"}}{{print 1 2 "a"}}{{println "z"}}`,
	`{{html "<a>"}}{{js "'x'"}}{{urlquery "a b"}}`,
	`{{len .Images}} {{index "abc" 1}} {{slice "abcdef" 1 3}}`,
	`{{with $x := index .Images "cli"}}{{$x}}{{end}}`,
	`{{if and .ReleaseImage (not .ClusterProfile)}}a{{else if .ClusterProfile}}b{{else}}c{{end}}`,
	`{{/* a comment */}}{{- " trimmed " -}}`,
	`{{ "{{ $labels.name }}" }} and {{ "{{ if eq $labels.name \"version\" }}" }}`,
	`{{range $i, $c := "abc"}}{{end}}`,
	`{{index 3 1}}`,
	`{{.NoSuchField}}`,
	`{{range .ReleaseImage}}{{end}}`,
	`{{template "undefined"}}`,
}

func plainRender(text string) ([]byte, error) {
	t, err := template.New("manifests/x.yaml").Option("missingkey=error").Parse(text)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	err = t.Execute(&b, testData())
	return b.Bytes(), err
}

func TestTemplateNesting(t *testing.T) {
	tests := []struct {
		text string
		want int
	}{
		{"plain", 0},
		{"{{if 1}}{{end}}", 1},
		{"{{if 1}}{{range 2}}{{end}}{{end}}", 2},
		{"{{if 1}}{{else if 2}}{{else if 3}}{{end}}{{if 1}}{{end}}", 3},
		{`{{ "{{if" }}{{ "{{range" }}`, 0},
		{"{{/* {{if 1}} */}}", 0},
		{"{{define \"a\"}}{{with .}}{{end}}{{end}}", 2},
		{"{{- if 1 -}}{{- end -}}", 1},
		{"{{`{{if`}}", 0},
		{"{{'{' }}{{if 1}}{{end}}", 1},
	}
	for _, tc := range tests {
		if got := templateNesting([]byte(tc.text), 100); got != tc.want {
			t.Errorf("templateNesting(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
}
