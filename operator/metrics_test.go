package operator

import (
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/payload-apply/payload-apply/clustersync"
	"github.com/payload-apply/payload-apply/lib/manifest"
	"github.com/payload-apply/payload-apply/lib/resourceapply"
)

// recordCollector collects collectClusterVersion's metrics of one record.
type recordCollector struct {
	cv  *configv1.ClusterVersion
	cur configv1.Release
}

func (c recordCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- clusterVersionDesc
	ch <- capabilityDesc
	ch <- availableUpdatesDesc
	ch <- operatorUpDesc
	ch <- operatorConditionsDesc
}

func (c recordCollector) Collect(ch chan<- prometheus.Metric) { collectClusterVersion(ch, c.cv, c.cur) }

// TestClusterVersionMetrics: the record as the CVO reports it, during an
// update from A to B that is failing.
func TestClusterVersionMetrics(t *testing.T) {
	at := func(s int64) metav1.Time { return metav1.NewTime(time.Unix(s, 0)) }
	done := at(200)
	cv := &configv1.ClusterVersion{}
	cv.CreationTimestamp = at(100)
	cv.Spec.DesiredUpdate = &configv1.Update{Version: "4.22.1", Image: "b"}
	cv.Status.Desired = configv1.Release{Version: "4.22.1", Image: "b"}
	cv.Spec.Upstream, cv.Spec.Channel = "https://updates.example.com/graph", "stable-4.22"
	cv.Status.AvailableUpdates = []configv1.Release{{Version: "4.22.2"}, {Version: "4.22.3"}}
	cv.Status.History = []configv1.UpdateHistory{
		{State: configv1.PartialUpdate, Version: "4.22.1", Image: "b", StartedTime: at(300)},
		{State: configv1.CompletedUpdate, Version: "4.22.0", Image: "a", StartedTime: at(150), CompletionTime: &done},
	}
	cv.Status.Capabilities = configv1.ClusterVersionCapabilitiesStatus{
		EnabledCapabilities: []configv1.ClusterVersionCapability{"baremetal"},
		KnownCapabilities:   []configv1.ClusterVersionCapability{"baremetal", "Console"},
	}
	cv.Status.Conditions = []configv1.ClusterOperatorStatusCondition{
		{Type: configv1.OperatorAvailable, Status: configv1.ConditionTrue, Reason: "Done"},
		{Type: "Failing", Status: configv1.ConditionTrue, Reason: "ClusterOperatorDegraded", LastTransitionTime: at(400)},
		{Type: configv1.OperatorProgressing, Status: configv1.ConditionUnknown},
	}
	want := `
# HELP cluster_operator_conditions Report the conditions for active cluster operators. 0 is False and 1 is True.
# TYPE cluster_operator_conditions gauge
cluster_operator_conditions{condition="Available",name="version",reason="Done"} 1
cluster_operator_conditions{condition="Failing",name="version",reason="ClusterOperatorDegraded"} 1
# HELP cluster_operator_up 1 if a cluster operator is Available=True. 0 otherwise, including if a cluster operator sets no Available condition. The 'version' label tracks the 'operator' version. The 'reason' label is passed through from the Available condition, unless the cluster operator sets no Available condition, in which case NoAvailableCondition is used.
# TYPE cluster_operator_up gauge
cluster_operator_up{name="version",reason="Done",version="4.22.0"} 1
# HELP cluster_version_available_updates Report the count of available versions for an upstream and channel.
# TYPE cluster_version_available_updates gauge
cluster_version_available_updates{channel="stable-4.22",upstream="https://updates.example.com/graph"} 2
# HELP cluster_version_capability Report currently enabled cluster capabilities. 0 is disabled, and 1 is enabled.
# TYPE cluster_version_capability gauge
cluster_version_capability{name="Console"} 0
cluster_version_capability{name="baremetal"} 1
`
	c := recordCollector{cv: cv, cur: current(cv, configv1.Release{Version: "4.22.0", Image: "a"})}
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "cluster_operator_conditions", "cluster_operator_up", "cluster_version_available_updates", "cluster_version_capability"); err != nil {
		t.Error(err)
	}
	got := map[string]float64{}
	ch := make(chan prometheus.Metric, 100)
	c.Collect(ch)
	close(ch)
	for m := range ch {
		if !strings.Contains(m.Desc().String(), `"cluster_version"`) {
			continue
		}
		var pb = metricPB(t, m)
		labels := map[string]string{}
		for _, l := range pb.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		got[labels["type"]+" "+labels["version"]+" "+labels["image"]+" from="+labels["from_version"]] = pb.GetGauge().GetValue()
	}
	for key, v := range map[string]float64{
		"completed 4.22.0 a from=":      200,
		"initial 4.22.0 a from=":        100,
		"cluster 4.22.1 b from=4.22.0":  100,
		"failure 4.22.1 b from=4.22.0":  400,
		"updating 4.22.1 b from=4.22.0": 300,
	} {
		if got[key] != v {
			t.Errorf("cluster_version %s = %v, want %v (all: %v)", key, got[key], v, got)
		}
	}
	if len(got) != 5 {
		t.Errorf("cluster_version series %v, want the five above (no desired: B is being applied)", got)
	}
}

func TestNoRecordMetrics(t *testing.T) {
	want := `
# HELP cluster_operator_up 1 if a cluster operator is Available=True. 0 otherwise, including if a cluster operator sets no Available condition. The 'version' label tracks the 'operator' version. The 'reason' label is passed through from the Available condition, unless the cluster operator sets no Available condition, in which case NoAvailableCondition is used.
# TYPE cluster_operator_up gauge
cluster_operator_up{name="version",reason="ClusterVersionNotFound",version=""} 0
`
	if err := testutil.CollectAndCompare(recordCollector{}, strings.NewReader(want), "cluster_operator_up"); err != nil {
		t.Error(err)
	}
}

func TestConditionTransitions(t *testing.T) {
	o := &Operator{apiRequests: &counters{}}
	m := newMetrics(o)
	co := func(conds ...configv1.ClusterOperatorStatusCondition) *configv1.ClusterOperator {
		c := &configv1.ClusterOperator{}
		c.Name = "dns"
		c.Status.Conditions = conds
		return c
	}
	avail := func(s configv1.ConditionStatus) configv1.ClusterOperatorStatusCondition {
		return configv1.ClusterOperatorStatusCondition{Type: configv1.OperatorAvailable, Status: s}
	}
	degraded := configv1.ClusterOperatorStatusCondition{Type: configv1.OperatorDegraded, Status: configv1.ConditionFalse}
	m.operatorChanged(co(), co(avail(configv1.ConditionFalse)))                                        // Available came
	m.operatorChanged(co(avail(configv1.ConditionFalse)), co(avail(configv1.ConditionTrue), degraded)) // changed, Degraded came
	m.operatorChanged(co(avail(configv1.ConditionTrue), degraded), co(avail(configv1.ConditionTrue), degraded))
	m.operatorChanged(co(avail(configv1.ConditionTrue), degraded), co(avail(configv1.ConditionTrue))) // Degraded went
	want := map[conditionKey]int{{"dns", "Available"}: 2, {"dns", "Degraded"}: 2}
	if len(m.cluster.transitions) != len(want) {
		t.Errorf("transitions %v, want %v", m.cluster.transitions, want)
	}
	for k, n := range want {
		if m.cluster.transitions[k] != n {
			t.Errorf("transitions of %v: %d, want %d", k, m.cluster.transitions[k], n)
		}
	}
}

func TestPassMetrics(t *testing.T) {
	o := &Operator{apiRequests: &counters{}}
	m := newMetrics(o)
	id := manifest.ID{Kind: "ConfigMap", Namespace: "ns", Name: "cm"}
	m.pass(&PassReport{Mode: ModeReconcile, Release: configv1.Release{Version: "4.22.0"}, Start: time.Now(), Duration: time.Second,
		Apply:    &clustersync.ApplyReport{Objects: &resourceapply.ChangeSet{}, Steps: &resourceapply.ChangeSet{}},
		Requests: map[string]int64{"GET": 40, "POST": 1}, Writes: 1,
		Drift: []resourceapply.Change{{Object: id, Action: resourceapply.Created}}})
	m.pass(&PassReport{Mode: ModeReconcile, Release: configv1.Release{Version: "4.22.0"}, Start: time.Now(), Duration: time.Second,
		Apply:    &clustersync.ApplyReport{Objects: &resourceapply.ChangeSet{}, Steps: &resourceapply.ChangeSet{}, Errors: []error{errTest}},
		Requests: map[string]int64{"GET": 40}, Err: errTest})
	for _, c := range []struct {
		name string
		got  float64
		want float64
	}{
		{"passes success", testutil.ToFloat64(m.passes.WithLabelValues("reconcile", "success")), 1},
		{"passes failure", testutil.ToFloat64(m.passes.WithLabelValues("reconcile", "failure")), 1},
		{"last pass writes", testutil.ToFloat64(m.lastPassWrites), 0},
		{"last pass GETs", testutil.ToFloat64(m.lastPassRequests.WithLabelValues("GET")), 40},
		{"drift", testutil.ToFloat64(m.drift.WithLabelValues("ConfigMap", "Created")), 1},
		{"payload errors", testutil.ToFloat64(m.payloadErrors.WithLabelValues("4.22.0")), 1},
	} {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
	if n := testutil.CollectAndCount(m.lastPassRequests); n != 1 {
		t.Errorf("last pass requests: %d series, want only the last pass's verbs", n)
	}
}
