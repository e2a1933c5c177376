//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/payload-apply/payload-apply/internal/realpayload"
)

// readmeCommand is one command line of a README sh block (continuation
// lines joined).
type readmeCommand struct {
	line int // where it starts in README.md
	text string
}

// readmeCommands returns the command lines of every ```sh block of
// README.md, in order: comment lines and blank lines left out, lines
// ending in a backslash joined with the next.
func readmeCommands(t *testing.T, readme string) []readmeCommand {
	t.Helper()
	f, err := os.Open(readme)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []readmeCommand
	in, pending := false, ""
	start, n := 0, 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n++
		l := sc.Text()
		switch {
		case !in && strings.TrimSpace(l) == "```sh":
			in = true
			continue
		case in && strings.TrimSpace(l) == "```":
			in = false
			continue
		case !in:
			continue
		}
		if pending == "" {
			if t := strings.TrimSpace(l); t == "" || strings.HasPrefix(t, "#") {
				continue
			}
			start = n
		}
		if strings.HasSuffix(l, `\`) {
			pending += l + "\n"
			continue
		}
		out = append(out, readmeCommand{line: start, text: pending + l})
		pending = ""
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestREADMEExamples runs every example of README.md as written, in
// order, in one bash session from the repository root (a variable one sets
// is there for the next, as in a terminal), and wants each to exit 0. Two
// things differ from a fresh terminal, neither in what runs:
//   - `go run ./cmd/payload-apply` and `go run ./hack/play-operators` run
//     the binaries this test built from the same source (what go run
//     builds; a go run per example would only add minutes of linking);
//   - `make test` is not run (it runs this test).
//
// mktemp makes its directories in a directory of the test, and test API
// servers started there are stopped at the end.
func TestREADMEExamples(t *testing.T) {
	realpayload.Dir(t) // the examples read ../shared/testdata/ocp-payload
	root, err := realpayload.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmds := readmeCommands(t, filepath.Join(root, "README.md"))
	if len(cmds) < 10 {
		t.Fatalf("found %d example commands in README.md: the parser is broken", len(cmds))
	}
	tmp := t.TempDir()
	t.Cleanup(func() { stopServersUnder(t, root, tmp) })
	play := playOperators(t)

	var script strings.Builder
	fmt.Fprintf(&script, `go() {
	if [ "$1" = run ]; then
		case "$2" in
		./cmd/payload-apply) shift 2; %q "$@"; return;;
		./hack/play-operators) shift 2; %q "$@"; return;;
		esac
	fi
	command go "$@"
}
`, binary, play)
	var ran []readmeCommand
	for _, c := range cmds {
		if strings.HasPrefix(c.text, "make ") {
			continue
		}
		ran = append(ran, c)
		fmt.Fprintf(&script, "echo \"+ README.md:%d\" >&2\n%s\necho \"%d $?\" >&3\n", c.line, c.text, len(ran)-1)
	}
	// Background examples (play-operators) end on their own; after a
	// failure they would hold the output open until their timeout.
	script.WriteString("jobs -p | xargs -r kill 2>/dev/null\n")
	status := filepath.Join(tmp, "status")
	cmd := exec.CommandContext(t.Context(), "bash", "-c", "exec 3>"+status+"\n"+script.String())
	cmd.Dir = root
	env := []string{"TMPDIR=" + tmp, "HOME=" + tmp}
	for _, kv := range os.Environ() {
		// A fresh terminal: no cluster configured.
		if !strings.HasPrefix(kv, "KUBECONFIG=") && !strings.HasPrefix(kv, "TMPDIR=") && !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	// go run and go build keep their caches where they were.
	for _, name := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		if v, err := exec.Command("go", "env", name).Output(); err == nil {
			env = append(env, name+"="+strings.TrimSpace(string(v)))
		}
	}
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err = cmd.Run()
	t.Logf("%d examples in %s", len(ran), time.Since(start).Round(100*time.Millisecond))
	if err != nil {
		t.Errorf("bash: %v", err)
	}
	data, err := os.ReadFile(status)
	if err != nil {
		t.Fatal(err)
	}
	codes := map[int]int{}
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var i, code int
		if _, err := fmt.Sscan(l, &i, &code); err == nil {
			codes[i] = code
		}
	}
	for i, c := range ran {
		code, ok := codes[i]
		switch {
		case !ok:
			t.Errorf("README.md:%d did not run: %s", c.line, c.text)
		case code != 0:
			t.Errorf("README.md:%d exited %d: %s", c.line, code, c.text)
		}
	}
	if t.Failed() {
		t.Logf("output:\n%s", out.String())
	}
}

// stopServersUnder stops the test API servers started in directories
// under dir.
func stopServersUnder(t *testing.T, root, dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		d := filepath.Join(dir, e.Name())
		if pids, _ := filepath.Glob(filepath.Join(d, "*.pid")); len(pids) == 0 {
			continue
		}
		stop := exec.Command(filepath.Join(root, "hack", "test-apiserver.sh"), "stop", d)
		if out, err := stop.CombinedOutput(); err != nil {
			t.Logf("stop %s: %v\n%s", d, err, out)
		}
	}
}
