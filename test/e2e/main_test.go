//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/payload-apply/payload-apply/test/apiserver"
	"github.com/payload-apply/payload-apply/test/clitest"
)

// binary is the payload-apply command built for this test binary.
var binary string

func TestMain(m *testing.M) {
	clitest.PeakHelper()
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "payload-apply-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if binary, err = clitest.Build(dir); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	return apiserver.Run(m, apiserver.Options{})
}

// result is how a run of the command ended.
type result = clitest.Result

// cli runs the command to completion.
func cli(t testing.TB, ctx context.Context, args ...string) result {
	t.Helper()
	return clitest.Run(t, ctx, binary, args...)
}

// event is one line of `apply -o json`.
type event struct {
	SchemaVersion int    `json:"schemaVersion"`
	Event         string `json:"event"`
	File          string `json:"file"`
	Doc           *int   `json:"doc"`
	APIVersion    string `json:"apiVersion"`
	Kind          string `json:"kind"`
	Namespace     string `json:"namespace"`
	Name          string `json:"name"`
	Step          string `json:"step"`
	Staged        bool   `json:"staged"`
	Action        string `json:"action"`
	Message       string `json:"message"`
	Reason        string `json:"reason"`
	Error         string `json:"error"`
	RunLevel      *int   `json:"runLevel"`
	Done          *int   `json:"done"`
	Total         int    `json:"total"`
	Ready         *int   `json:"ready"`
	Pending       []struct {
		Object  string `json:"object"`
		Message string `json:"message"`
	} `json:"pending"`
	Success     *bool          `json:"success"`
	Interrupted *bool          `json:"interrupted"`
	Changes     map[string]int `json:"changes"`
	// StepChanges counts the steps' outcomes by action.
	StepChanges map[string]int `json:"stepChanges"`
	Requests    *struct {
		Reads  int64            `json:"reads"`
		Writes int64            `json:"writes"`
		ByVerb map[string]int64 `json:"byVerb"`
	} `json:"requests"`
	Errors         []string       `json:"errors"`
	ErrorsByReason map[string]int `json:"errorsByReason"`
	Skipped        map[string]int `json:"skipped"`
	Wait           *struct {
		Skipped, EndedAtFailure bool
		Ready, Total, Pending   int
	} `json:"wait"`
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

func summaryOf(t testing.TB, events []event) event {
	t.Helper()
	if len(events) == 0 || events[len(events)-1].Event != "summary" {
		t.Fatalf("the event stream does not end with a summary")
	}
	return events[len(events)-1]
}

// startCLI runs the command in the background and streams its JSON
// events.
func startCLI(t *testing.T, ctx context.Context, args ...string) *clitest.Background[event] {
	t.Helper()
	return clitest.Start[event](t, ctx, binary, args...)
}
