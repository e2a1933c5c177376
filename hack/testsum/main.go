// Command testsum runs test commands that print `go test -json` and says
// what they did: the output of failed tests, a line per package as `go
// test` prints one, the tests skipped with the reason they gave, and one
// closing line, `N passed, N failed, N skipped` (tests and subtests of
// every command together). It exits 1 when a test or a package failed or
// a command exited non-zero, so `make test` fails as the commands would.
//
// Usage (the Makefile's test target):
//
//	go run ./hack/testsum -run 'go test -json ./...' -run 'go test -json -race ./lib/...'
//
// Each -run is run by sh -c, in order, all of them even after a failure;
// lines of its stdout that are not test events (make's own) are printed as
// they are, and its stderr goes to stderr.
//
// May import: nothing.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"
)

// event is one line of go test -json (cmd/test2json).
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	Elapsed    float64
	ImportPath string // build-output, build-fail
}

// runs are the -run flags.
type runs []string

func (r *runs) String() string     { return strings.Join(*r, "; ") }
func (r *runs) Set(s string) error { *r = append(*r, s); return nil }

func main() {
	var cmds runs
	flag.Var(&cmds, "run", "a shell command printing go test -json; repeat for more")
	flag.Parse()
	if len(cmds) == 0 {
		fmt.Fprintln(os.Stderr, "testsum: no -run command")
		os.Exit(2)
	}
	s := newSummary(os.Stdout)
	start := time.Now()
	failedCmds := 0
	for _, c := range cmds {
		if err := s.run(c); err != nil {
			failedCmds++
			fmt.Fprintf(os.Stdout, "testsum: %s: %v\n", c, err)
		}
	}
	s.close(time.Since(start))
	if s.failed > 0 || s.failedPkgs > 0 || failedCmds > 0 {
		os.Exit(1)
	}
}

// summary reads test events and keeps the counts.
type summary struct {
	out                     io.Writer
	passed, failed, skipped int
	failedPkgs              int
	// output of each running test, printed when it fails.
	output map[string][]string
	// skips are the top-level tests skipped, with their reason.
	skips []string
}

func newSummary(out io.Writer) *summary {
	return &summary{out: out, output: map[string][]string{}}
}

// run runs one command and reads its events.
func (s *summary) run(command string) error {
	cmd := exec.Command("sh", "-c", command)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	s.read(stdout)
	return cmd.Wait()
}

// read reads events (and other lines) until r ends.
func (s *summary) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil || e.Action == "" {
			fmt.Fprintf(s.out, "%s\n", line)
			continue
		}
		s.event(e)
	}
}

func (s *summary) event(e event) {
	key := e.Package + " " + e.Test
	switch e.Action {
	case "output":
		if e.Test != "" {
			s.output[key] = append(s.output[key], e.Output)
		} else if pkgLine(e.Output) {
			fmt.Fprint(s.out, e.Output)
		} else {
			s.output[key] = append(s.output[key], e.Output)
		}
	case "build-output":
		fmt.Fprint(s.out, e.Output)
	case "build-fail":
		s.failedPkgs++
	case "pass":
		if e.Test != "" {
			s.passed++
		}
		delete(s.output, key)
	case "skip":
		if e.Test != "" {
			s.skipped++
			if !strings.Contains(e.Test, "/") {
				s.skips = append(s.skips, fmt.Sprintf("%s %s: %s", e.Package, e.Test, skipReason(s.output[key])))
			}
		}
		delete(s.output, key)
	case "fail":
		if e.Test != "" {
			s.failed++
			for _, l := range s.output[key] {
				fmt.Fprint(s.out, l)
			}
		} else {
			s.failedPkgs++
			// Output of the package itself: a panic, a TestMain failure.
			for _, l := range s.output[key] {
				fmt.Fprint(s.out, l)
			}
		}
		delete(s.output, key)
	}
}

// pkgLine reports the lines go test prints per package without -v.
func pkgLine(out string) bool {
	for _, p := range []string{"ok  \t", "FAIL\t", "?   \t", "--- FAIL", "FAIL\n"} {
		if strings.HasPrefix(out, p) {
			return true
		}
	}
	return false
}

// skipReason is the last line a skipped test printed: t.Skip's message.
func skipReason(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "--- SKIP") || strings.HasPrefix(l, "=== ") {
			continue
		}
		return l
	}
	return "no reason given"
}

// close prints the skipped tests and the closing line.
func (s *summary) close(elapsed time.Duration) {
	if len(s.skips) > 0 {
		sort.Strings(s.skips)
		fmt.Fprintf(s.out, "skipped tests:\n")
		for _, sk := range s.skips {
			fmt.Fprintf(s.out, "  %s\n", sk)
		}
	}
	if s.failedPkgs > 0 {
		fmt.Fprintf(s.out, "%d packages failed to build or run\n", s.failedPkgs)
	}
	fmt.Fprintf(s.out, "tests took %s\n", elapsed.Round(time.Second))
	fmt.Fprintf(s.out, "%d passed, %d failed, %d skipped\n", s.passed, s.failed, s.skipped)
}
