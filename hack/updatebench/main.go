// Command updatebench measures what the operator does each time it asks
// an update service (issue 34): fetch a channel's graph of 1,000 releases
// and 10,000 edges (conditional ones included) over HTTP from
// updategraph's handler, read it within the limits, take the cluster's
// updates from it, and judge the risks of its conditional updates, 50
// risks with a PromQL rule each, against Debian's Prometheus (started on
// 127.0.0.1, as the tests start it, scraping a /metrics of 50 series).
//
// Rounds alternate two paths on the same graph:
//
//	poll:      the operator's (lib/updateservice, cincinnati.Parse,
//	           Graph.Updates, cincinnati.Evaluate through one
//	           lib/clustercondition Evaluator kept across rounds: each rule
//	           evaluated once per period, by name, whatever the edges)
//	per-edge:  the reference: the same fetch, then every conditional
//	           edge's every risk asked of Prometheus, no cache
//
// and prints, per path, the median wall time, the allocations of a round,
// and the PromQL queries sent (the first poll, cold, and the later ones,
// warm, apart). It also times updategraph.Build of the same releases (the
// server's side) and the graph's JSON size.
//
// Usage:
//
//	go run ./hack/updatebench [-releases 1000] [-risks 50] [-rounds 7]
//
// May import: lib/cincinnati, lib/clustercondition, lib/updateservice,
// test/prometheus, updategraph.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/blang/semver/v4"
	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/payload-apply/payload-apply/lib/cincinnati"
	"github.com/payload-apply/payload-apply/lib/clustercondition"
	"github.com/payload-apply/payload-apply/lib/updateservice"
	"github.com/payload-apply/payload-apply/test/prometheus"
	"github.com/payload-apply/payload-apply/updategraph"
)

func main() {
	releases := flag.Int("releases", 1000, "releases in the channel")
	risks := flag.Int("risks", 50, "risks, one per target of the cluster's conditional updates")
	rounds := flag.Int("rounds", 7, "rounds of each path, alternating")
	flag.Parse()
	if err := run(*releases, *risks, *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "updatebench:", err)
		os.Exit(1)
	}
}

const channel = "stable-4.22"

// graph makes the releases and graph-data: release i is 4.22.i, updated
// into from the ten before it; 4.22.0 (the cluster's version) also
// updates into each of the last `risks` releases, each of which has a
// conditional blocked edge with its own risk and PromQL rule.
func graph(n, risks int) ([]updategraph.Release, *updategraph.GraphData) {
	var rels []updategraph.Release
	for i := range n {
		v := fmt.Sprintf("4.22.%d", i)
		r := updategraph.Release{Version: semver.MustParse(v), Arch: "amd64", Payload: "registry.example.com/ocp/release@sha256:" + v,
			Digest: "sha256:" + v, Source: v, Metadata: map[string]string{"url": "https://errata.example.com/" + v, cincinnati.MetadataChannels: channel}}
		for j := max(0, i-10); j < i; j++ {
			r.Previous = append(r.Previous, fmt.Sprintf("4.22.%d", j))
		}
		if i >= n-risks {
			r.Previous = append(r.Previous, "4.22.0")
		}
		rels = append(rels, r)
	}
	data := &updategraph.GraphData{}
	for k := range risks {
		data.Blocks = append(data.Blocks, updategraph.Block{To: semver.MustParse(fmt.Sprintf("4.22.%d", n-risks+k)), From: regexp.MustCompile(".*"),
			Risk: &configv1.ConditionalUpdateRisk{Name: fmt.Sprintf("Risk%d", k), Message: "A risk.", URL: fmt.Sprintf("https://bugs.example.com/%d", k),
				MatchingRules: []configv1.ClusterCondition{{Type: cincinnati.RulePromQL, PromQL: &configv1.PromQLClusterCondition{PromQL: fmt.Sprintf(`max(bench_exposed{risk="%d"})`, k)}}}}})
	}
	return rels, data
}

// metrics serves bench_exposed{risk="K"}: 1 for even K, else 0.
func metrics(risks int) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "# TYPE bench_exposed gauge")
		for k := range risks {
			fmt.Fprintf(w, "bench_exposed{risk=\"%d\"} %d\n", k, 1-k%2)
		}
	}))
}

// round is one measured round.
type round struct {
	wall    time.Duration
	alloc   uint64
	queries int64
}

func measure(f func() (int64, error)) (round, error) {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	q, err := f()
	r := round{wall: time.Since(start), queries: q}
	runtime.ReadMemStats(&after)
	r.alloc = after.TotalAlloc - before.TotalAlloc
	return r, err
}

func run(n, risks, rounds int) error {
	ctx := context.Background()
	rels, data := graph(n, risks)
	start := time.Now()
	g, err := updategraph.Build(rels, data)
	if err != nil {
		return err
	}
	built := time.Since(start)
	gr := g.Get(channel, "amd64")
	body, _ := json.Marshal(gr)
	conditional := 0
	for _, ce := range gr.ConditionalEdges {
		conditional += len(ce.Edges)
	}
	fmt.Printf("graph: %d releases, %d edges + %d conditional edges (%d risks), %d KiB of JSON; updategraph.Build %s\n",
		len(gr.Nodes), len(gr.Edges), conditional, len(gr.ConditionalEdges), len(body)>>10, built.Round(time.Millisecond))

	svc := httptest.NewServer(updategraph.Handler(func() *updategraph.Graphs { return g }))
	defer svc.Close()
	m := metrics(risks)
	defer m.Close()
	p, err := prometheus.Start(ctx, prometheus.Options{ScrapeInterval: time.Second})
	if err != nil {
		return err
	}
	defer p.Stop()
	if err := p.SetTargets(strings.TrimPrefix(m.URL, "http://")); err != nil {
		return err
	}
	if err := p.WaitFor(ctx, `bench_exposed{risk="0"}`, 60*time.Second); err != nil {
		return err
	}
	u, err := url.Parse(svc.URL + updategraph.GraphPaths[0])
	if err != nil {
		return err
	}
	u, err = cincinnati.Check(u.String(), cincinnati.Query{Channel: channel, Arch: "amd64", ID: "5b0d3c8f-3a51-4d2a-9f6e-8e1c3f6b2a10", Version: "4.22.0"})
	if err != nil {
		return err
	}
	client := &updateservice.Client{}
	eval, err := clustercondition.New(clustercondition.Options{PrometheusURL: p.URL})
	if err != nil {
		return err
	}
	fetch := func() (*cincinnati.Graph, *cincinnati.Result, error) {
		gr, err := client.Fetch(ctx, u)
		if err != nil {
			return nil, nil, err
		}
		res, err := gr.Updates("4.22.0", channel)
		return gr, res, err
	}
	poll := func() (int64, error) {
		before := eval.Queries()
		_, res, err := fetch()
		if err != nil {
			return 0, err
		}
		ev := cincinnati.Evaluate(ctx, eval, res.Updates, res.Conditional, nil, metav1.Now())
		if len(ev.Conditional) != risks || len(ev.Available) != 10+risks/2 {
			return 0, fmt.Errorf("%d conditional updates, %d available; want %d, %d", len(ev.Conditional), len(ev.Available), risks, 10+risks/2)
		}
		return eval.Queries() - before, nil
	}
	perEdge := func() (int64, error) {
		gr, _, err := fetch()
		if err != nil {
			return 0, err
		}
		fresh, err := clustercondition.New(clustercondition.Options{PrometheusURL: p.URL, Period: time.Nanosecond, RetryFailed: time.Nanosecond})
		if err != nil {
			return 0, err
		}
		for _, ce := range gr.ConditionalEdges {
			for range ce.Edges {
				for _, r := range ce.Risks {
					if _, err := fresh.Match(ctx, r.MatchingRules); err != nil {
						return 0, err
					}
				}
			}
		}
		return fresh.Queries(), nil
	}
	var polls, edges []round
	for i := range rounds {
		for _, path := range []struct {
			f   func() (int64, error)
			out *[]round
		}{{poll, &polls}, {perEdge, &edges}} {
			r, err := measure(path.f)
			if err != nil {
				return fmt.Errorf("round %d: %w", i, err)
			}
			*path.out = append(*path.out, r)
		}
	}
	fmt.Printf("%-26s %10s %12s %8s\n", "path", "wall", "allocated", "queries")
	report := func(name string, rs []round) {
		walls := make([]time.Duration, len(rs))
		allocs := make([]uint64, len(rs))
		for i, r := range rs {
			walls[i], allocs[i] = r.wall, r.alloc
		}
		sort.Slice(walls, func(i, j int) bool { return walls[i] < walls[j] })
		sort.Slice(allocs, func(i, j int) bool { return allocs[i] < allocs[j] })
		fmt.Printf("%-26s %10s %9.1f MiB %8d\n", name, walls[len(walls)/2].Round(100*time.Microsecond), float64(allocs[len(allocs)/2])/(1<<20), rs[len(rs)-1].queries)
	}
	report("poll, cold (first round)", polls[:1])
	report("poll, warm (median)", polls[1:])
	report("per-edge, no cache", edges)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Printf("heap in use at the end: %.1f MiB; PromQL queries of the polls in all: %d\n", float64(ms.HeapInuse)/(1<<20), eval.Queries())
	return nil
}
