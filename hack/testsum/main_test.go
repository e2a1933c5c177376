package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestSummary(t *testing.T) {
	in := `make: building
{"Action":"start","Package":"p"}
{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"pass","Package":"p","Test":"TestA"}
{"Action":"run","Package":"p","Test":"TestB"}
{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:9: want 1, got 2\n"}
{"Action":"output","Package":"p","Test":"TestB","Output":"--- FAIL: TestB (0.00s)\n"}
{"Action":"fail","Package":"p","Test":"TestB"}
{"Action":"run","Package":"p","Test":"TestC"}
{"Action":"output","Package":"p","Test":"TestC","Output":"    c_test.go:3: skipping: the real payload is not at ../shared\n"}
{"Action":"output","Package":"p","Test":"TestC","Output":"--- SKIP: TestC (0.00s)\n"}
{"Action":"skip","Package":"p","Test":"TestC"}
{"Action":"run","Package":"p","Test":"TestC/sub"}
{"Action":"skip","Package":"p","Test":"TestC/sub"}
{"Action":"output","Package":"p","Output":"FAIL\tp\t0.01s\n"}
{"Action":"fail","Package":"p"}
{"ImportPath":"q","Action":"build-output","Output":"q/x.go:1: syntax error\n"}
{"ImportPath":"q","Action":"build-fail"}
`
	var out bytes.Buffer
	s := newSummary(&out)
	s.read(strings.NewReader(in))
	s.close(3 * time.Second)
	want := `make: building
    b_test.go:9: want 1, got 2
--- FAIL: TestB (0.00s)
FAIL	p	0.01s
q/x.go:1: syntax error
skipped tests:
  p TestC: c_test.go:3: skipping: the real payload is not at ../shared
2 packages failed to build or run
tests took 3s
1 passed, 1 failed, 2 skipped
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
