package operator

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/payload-apply/payload-apply/lib/requests"
)

// metricPrefix prefixes the operator's own metrics; the CVO's names are
// kept as they are.
const metricPrefix = "payload_apply_operator_"

// metrics are the operator's Prometheus metrics: its own (passes,
// requests, drift, leadership) and, from the watches, the CVO's
// (clusterCollector).
type metrics struct {
	leader            prometheus.Gauge
	passes            *prometheus.CounterVec
	passDuration      *prometheus.HistogramVec
	passWrites        *prometheus.HistogramVec
	lastPassWrites    prometheus.Gauge
	lastPassRequests  *prometheus.GaugeVec
	lastPassTimestamp *prometheus.GaugeVec
	drift             *prometheus.CounterVec
	payloadErrors     *prometheus.GaugeVec

	payload  *payloadProgress
	requests *counters
	cluster  *clusterCollector
}

func newMetrics(o *Operator) *metrics {
	return &metrics{
		leader: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: metricPrefix + "leader",
			Help: "1 while this replica holds the Lease (and is the only one that writes), else 0.",
		}),
		passes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: metricPrefix + "passes_total",
			Help: "Passes by mode (install, reconcile, update) and result (success, failure, interrupted).",
		}, []string{"mode", "result"}),
		passDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    metricPrefix + "pass_duration_seconds",
			Help:    "How long a pass took, by mode.",
			Buckets: []float64{0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120, 300, 600},
		}, []string{"mode"}),
		passWrites: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    metricPrefix + "pass_writes",
			Help:    "Write requests (POST, PUT, PATCH, DELETE) a pass sent to the managed cluster, by mode: 0 for a reconcile pass of a steady cluster.",
			Buckets: []float64{0, 1, 5, 20, 100, 500, 2000},
		}, []string{"mode"}),
		lastPassWrites: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: metricPrefix + "last_pass_writes",
			Help: "Write requests the last pass sent to the managed cluster.",
		}),
		lastPassRequests: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: metricPrefix + "last_pass_requests",
			Help: "Requests the last pass sent to the managed cluster, by verb (GET, LIST, DISCOVERY, POST, PUT, PATCH, DELETE).",
		}, []string{"verb"}),
		lastPassTimestamp: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: metricPrefix + "last_pass_timestamp_seconds",
			Help: "When the last pass of each mode and result ended, in seconds since the epoch.",
		}, []string{"mode", "result"}),
		drift: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: metricPrefix + "drift_repaired_total",
			Help: "Objects a reconcile pass found edited or deleted and wrote back, by kind and action (Created, Configured, Deleted).",
		}, []string{"kind", "action"}),
		payloadErrors: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "cluster_operator_payload_errors",
			Help: "Report the number of errors encountered applying the payload.",
		}, []string{"version"}),
		payload:  &payloadProgress{},
		requests: o.apiRequests,
		cluster:  &clusterCollector{o: o, transitions: map[conditionKey]int{}},
	}
}

// register registers every metric, with Go's and the process's.
func (m *metrics) register(r prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{
		m.leader, m.passes, m.passDuration, m.passWrites, m.lastPassWrites, m.lastPassRequests,
		m.lastPassTimestamp, m.drift, m.payloadErrors,
		&payloadCollector{p: m.payload}, &requestsCollector{c: m.requests}, m.cluster,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	} {
		if err := r.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// pass counts a pass.
func (m *metrics) pass(r *PassReport) {
	mode, result := string(r.Mode), r.Result()
	m.passes.WithLabelValues(mode, result).Inc()
	m.passDuration.WithLabelValues(mode).Observe(r.Duration.Seconds())
	m.passWrites.WithLabelValues(mode).Observe(float64(r.Writes))
	m.lastPassWrites.Set(float64(r.Writes))
	m.lastPassRequests.Reset()
	for verb, n := range r.Requests {
		m.lastPassRequests.WithLabelValues(verb).Set(float64(n))
	}
	m.lastPassTimestamp.WithLabelValues(mode, result).Set(float64(r.Start.Add(r.Duration).Unix()))
	for _, c := range r.Drift {
		m.drift.WithLabelValues(c.Object.Kind, string(c.Action)).Inc()
	}
	m.payloadErrors.Reset()
	errs := 0
	if r.Apply != nil {
		errs = len(r.Apply.Errors)
	}
	m.payloadErrors.WithLabelValues(r.Release.Version).Set(float64(errs))
}

// passFailedEarly counts a pass that failed before it applied anything.
func (m *metrics) passFailedEarly() {
	m.passes.WithLabelValues("", "failure").Inc()
}

// payloadCollector is the CVO's cluster_version_payload: the tasks of
// the pass in flight (or the last one) applied and pending.
type payloadCollector struct{ p *payloadProgress }

var payloadDesc = prometheus.NewDesc("cluster_version_payload", "Report the number of entries in the payload.", []string{"version", "type"}, nil)

// Describe sends the metric's description.
func (c *payloadCollector) Describe(ch chan<- *prometheus.Desc) { ch <- payloadDesc }

// Collect sends the counts, none before the first pass.
func (c *payloadCollector) Collect(ch chan<- prometheus.Metric) {
	version, done, total := c.p.get()
	if total == 0 {
		return
	}
	ch <- prometheus.MustNewConstMetric(payloadDesc, prometheus.GaugeValue, float64(done), version, "applied")
	ch <- prometheus.MustNewConstMetric(payloadDesc, prometheus.GaugeValue, float64(total-done), version, "pending")
}

// counters are request counters by client name: "apply" (the passes),
// "watch" (the informers) and "lease" (leader election).
type counters struct {
	mu sync.Mutex
	by map[string][]*requests.Counter
}

// track adds a counter under a client name; a new leadership's apply
// client adds to what the earlier ones counted.
func (c *counters) track(client string, rc *requests.Counter) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.by == nil {
		c.by = map[string][]*requests.Counter{}
	}
	c.by[client] = append(c.by[client], rc)
}

// totals returns the counts by client and verb.
func (c *counters) totals() map[string]map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]map[string]int64{}
	for client, rcs := range c.by {
		sum := map[string]int64{}
		for _, rc := range rcs {
			for verb, n := range rc.Counts() {
				sum[verb] += n
			}
		}
		out[client] = sum
	}
	return out
}

// requestsCollector is payload_apply_operator_api_requests_total.
type requestsCollector struct{ c *counters }

var requestsDesc = prometheus.NewDesc(metricPrefix+"api_requests_total",
	"Requests sent to the API servers, by client (apply: the passes, to the managed cluster; watch: its watches; lease: leader election, to the Lease's cluster) and verb.",
	[]string{"client", "verb"}, nil)

// Describe sends the metric's description.
func (c *requestsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- requestsDesc }

// Collect sends the counts.
func (c *requestsCollector) Collect(ch chan<- prometheus.Metric) {
	for client, verbs := range c.c.totals() {
		for verb, n := range verbs {
			ch <- prometheus.MustNewConstMetric(requestsDesc, prometheus.CounterValue, float64(n), client, verb)
		}
	}
}
