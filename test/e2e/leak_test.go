//go:build e2e

package e2e

import (
	"encoding/base64"
	"fmt"
	"sort"
	"strings"
	"testing"
)

// planted are secrets a test puts where the tool will handle them (a
// kubeconfig, a payload Secret, a live Secret) and then greps every output
// stream for. Any command can be checked with it: apply, status, diff.
type planted struct {
	// forms maps each searched string to the secret it comes from.
	forms map[string]string
}

// minForm is the shortest string searched: shorter ones (the last line of
// a PEM key, say) would match by chance.
const minForm = 12

// plant adds a secret under a name, with its base64 forms (standard, raw,
// URL) and, for a multi-line value such as a PEM key, each line of it.
func (p *planted) plant(name, value string) {
	if p.forms == nil {
		p.forms = map[string]string{}
	}
	add := func(form, what string) {
		form = strings.TrimSpace(form)
		if len(form) >= minForm {
			p.forms[form] = what
		}
	}
	add(value, name)
	add(base64.StdEncoding.EncodeToString([]byte(value)), name+" (base64)")
	add(base64.RawStdEncoding.EncodeToString([]byte(value)), name+" (base64, unpadded)")
	add(base64.URLEncoding.EncodeToString([]byte(value)), name+" (base64url)")
	if strings.Contains(value, "\n") {
		for i, line := range strings.Split(value, "\n") {
			if !strings.HasPrefix(line, "-----") {
				add(line, fmt.Sprintf("%s (line %d)", name, i+1))
			}
		}
	}
}

// leaks returns, for each planted secret found in out, what it is and
// where: empty when out shows none of them.
func (p *planted) leaks(out string) []string {
	var found []string
	for form, what := range p.forms {
		if i := strings.Index(out, form); i >= 0 {
			lo, hi := max(0, i-80), min(len(out), i+len(form)+40)
			found = append(found, fmt.Sprintf("%s at byte %d: …%s…", what, i, out[lo:hi]))
		}
	}
	sort.Strings(found)
	return found
}

// check fails the test when any stream shows a planted secret.
func (p *planted) check(t *testing.T, label string, streams map[string]string) {
	t.Helper()
	if len(p.forms) == 0 {
		t.Fatal("nothing planted")
	}
	for name, out := range streams {
		for _, l := range p.leaks(out) {
			t.Errorf("%s: %s leaks %s", label, name, l)
		}
	}
}
