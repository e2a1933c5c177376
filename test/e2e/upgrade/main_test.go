//go:build e2e

// Package upgrade_test moves a real API server from the real payload
// (release A) through the releases internal/genupgrade makes of it, with
// the payload-apply command, while the test plays the operators.
package upgrade_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/payload-apply/payload-apply/internal/genupgrade"
	"github.com/payload-apply/payload-apply/internal/realpayload"
	"github.com/payload-apply/payload-apply/test/apiserver"
	"github.com/payload-apply/payload-apply/test/clitest"
)

// binary is the payload-apply command built for this test binary; work
// holds the releases generated from the real payload, by version.
var (
	binary   string
	releases = map[string]string{}
	variants = map[string]*genupgrade.Variant{}
)

// The releases the test makes of A: a z-stream, a minor, and one two
// minors on.
const (
	zStream  = "4.22.1"
	minor    = "4.23.0"
	twoMinor = "4.24.0"
)

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "payload-apply-upgrade-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	root, err := realpayload.ModuleRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if binary, err = clitest.Build(dir); err != nil {
		fmt.Fprintln(os.Stderr, "upgrade e2e:", err)
		return 1
	}
	if a := filepath.Join(root, "..", "shared", "testdata", "ocp-payload"); dirExists(a) {
		for _, v := range []string{zStream, minor, twoMinor} {
			out := filepath.Join(dir, v)
			if variants[v], err = genupgrade.Write(a, out, v); err != nil {
				fmt.Fprintln(os.Stderr, "upgrade e2e:", err)
				return 1
			}
			releases[v] = out
		}
	}
	return apiserver.Run(m, apiserver.Options{})
}

func dirExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// result is how a run of the command ended.
type result = clitest.Result

// cli runs the command to completion.
func cli(t testing.TB, ctx context.Context, args ...string) result {
	t.Helper()
	return clitest.Run(t, ctx, binary, args...)
}

// event is one line of -o json; the fields this test reads.
type event struct {
	Event     string `json:"event"`
	File      string `json:"file"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Action    string `json:"action"`
	Message   string `json:"message"`
	Reason    string `json:"reason"`
	Error     string `json:"error"`
	Success   *bool  `json:"success"`
	Completed *bool  `json:"completed"`
	Order     string `json:"order"`
	State     string `json:"state"`
	Interrupt bool   `json:"interrupted"`
	RecordW   *int   `json:"recordWrites"`
	Requests  *struct {
		ByVerb map[string]int64 `json:"byVerb"`
	} `json:"requests"`
	Errors []string        `json:"errors"`
	Plan   json.RawMessage `json:"plan"`
}

func (e event) object() string {
	if e.Namespace == "" {
		return e.Kind + "/" + e.Name
	}
	return e.Kind + "/" + e.Namespace + "/" + e.Name
}

func parseEvents(t testing.TB, stdout string) []event {
	t.Helper()
	return clitest.ParseEvents[event](t, stdout)
}

// startCLI runs the command in the background and streams its JSON
// events.
func startCLI(t *testing.T, ctx context.Context, args ...string) *clitest.Background[event] {
	t.Helper()
	return clitest.Start[event](t, ctx, binary, args...)
}
