package operator

import (
	"sync"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The CVO's metrics of the cluster's record and its ClusterOperators
// (pkg/cvo/metrics.go), with its names, labels and values.
var (
	clusterVersionDesc = prometheus.NewDesc("cluster_version",
		"Reports the version of the cluster in terms of seconds since the epoch: type current is the release being applied (the payload's creation date, 0 when unknown), "+
			"desired a spec.desiredUpdate not reached yet, failure the time Failing became True, completed the last completed update's completion time, "+
			"cluster the ClusterVersion's creation time at the current version, updating the start of an update in progress, initial the oldest history entry.",
		[]string{"type", "version", "image", "from_version"}, nil)
	availableUpdatesDesc = prometheus.NewDesc("cluster_version_available_updates",
		"Report the count of available versions for an upstream and channel.", []string{"upstream", "channel"}, nil)
	capabilityDesc = prometheus.NewDesc("cluster_version_capability",
		"Report currently enabled cluster capabilities. 0 is disabled, and 1 is enabled.", []string{"name"}, nil)
	operatorUpDesc = prometheus.NewDesc("cluster_operator_up",
		"1 if a cluster operator is Available=True. 0 otherwise, including if a cluster operator sets no Available condition. The 'version' label tracks the 'operator' version. "+
			"The 'reason' label is passed through from the Available condition, unless the cluster operator sets no Available condition, in which case NoAvailableCondition is used.",
		[]string{"name", "version", "reason"}, nil)
	operatorConditionsDesc = prometheus.NewDesc("cluster_operator_conditions",
		"Report the conditions for active cluster operators. 0 is False and 1 is True.", []string{"name", "condition", "reason"}, nil)
	transitionsDesc = prometheus.NewDesc("cluster_operator_condition_transitions",
		"Reports the number of times that a condition on a cluster operator changes status", []string{"name", "condition"}, nil)
)

// conditionKey names one condition of one ClusterOperator.
type conditionKey struct{ name, typ string }

// clusterCollector collects the CVO's metrics from the leader's watches
// (nothing while not leading, or before they have synced).
type clusterCollector struct {
	o *Operator

	mu          sync.Mutex
	transitions map[conditionKey]int
}

// Describe sends the descriptions.
func (c *clusterCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{clusterVersionDesc, availableUpdatesDesc, capabilityDesc, operatorUpDesc, operatorConditionsDesc, transitionsDesc} {
		ch <- d
	}
}

// operatorChanged counts the condition changes of a ClusterOperator
// update: a condition whose status changed, or that came or went.
func (m *metrics) operatorChanged(old, cur *configv1.ClusterOperator) {
	c := m.cluster
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := map[configv1.ClusterStatusConditionType]bool{}
	for _, o := range old.Status.Conditions {
		if seen[o.Type] {
			continue
		}
		seen[o.Type] = true
		if n := findCondition(cur.Status.Conditions, o.Type); n == nil || n.Status != o.Status {
			c.transitions[conditionKey{cur.Name, string(o.Type)}]++
		}
	}
	for _, n := range cur.Status.Conditions {
		if !seen[n.Type] {
			seen[n.Type] = true
			c.transitions[conditionKey{cur.Name, string(n.Type)}]++
		}
	}
}

func findCondition(conds []configv1.ClusterOperatorStatusCondition, t configv1.ClusterStatusConditionType) *configv1.ClusterOperatorStatusCondition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

func gauge(d *prometheus.Desc, v float64, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

func boolValue(s configv1.ConditionStatus) float64 {
	if s == configv1.ConditionTrue {
		return 1
	}
	return 0
}

// Collect sends the metrics of the record and the ClusterOperators.
func (c *clusterCollector) Collect(ch chan<- prometheus.Metric) {
	c.o.mu.Lock()
	w := c.o.watch
	c.o.mu.Unlock()
	if w == nil {
		return
	}
	cv, cos, ok := w.cached()
	if !ok {
		return
	}
	cur := c.o.own
	if cv != nil {
		cur = current(cv, c.o.own)
	}
	completed := collectClusterVersion(ch, cv, cur)
	ch <- gauge(clusterVersionDesc, 0, "current", cur.Version, cur.Image, completed)

	for _, co := range cos {
		version := ""
		for _, v := range co.Status.Versions {
			if v.Name == "operator" {
				version = v.Version
				break
			}
		}
		up, reason := 0.0, "NoAvailableCondition"
		if a := findCondition(co.Status.Conditions, configv1.OperatorAvailable); a != nil {
			up, reason = boolValue(a.Status), a.Reason
		}
		ch <- gauge(operatorUpDesc, up, co.Name, version, reason)
		for _, cond := range co.Status.Conditions {
			if cond.Status == configv1.ConditionTrue || cond.Status == configv1.ConditionFalse {
				ch <- gauge(operatorConditionsDesc, boolValue(cond.Status), co.Name, string(cond.Type), cond.Reason)
			}
		}
	}
	c.mu.Lock()
	for k, n := range c.transitions {
		ch <- gauge(transitionsDesc, float64(n), k.name, k.typ)
	}
	c.mu.Unlock()
}

// collectClusterVersion sends the metrics of the record, as the CVO:
// cluster_version's completed, initial, cluster, desired, failure and
// updating series, the capabilities, and the record's conditions as the
// ClusterOperator "version"'s. It returns the last completed version.
func collectClusterVersion(ch chan<- prometheus.Metric, cv *configv1.ClusterVersion, cur configv1.Release) string {
	if cv == nil {
		ch <- gauge(operatorUpDesc, 0, "version", "", "ClusterVersionNotFound")
		ch <- gauge(operatorConditionsDesc, 0, "version", string(configv1.OperatorAvailable), "ClusterVersionNotFound")
		return ""
	}
	h := cv.Status.History
	var completed, initial configv1.UpdateHistory
	if len(h) > 0 {
		initial = h[len(h)-1]
	}
	for i, e := range h {
		if e.State != configv1.CompletedUpdate {
			continue
		}
		completed = e
		var previous configv1.UpdateHistory
		for _, p := range h[i+1:] {
			if p.State == configv1.CompletedUpdate {
				previous = p
				break
			}
		}
		ch <- gauge(clusterVersionDesc, unix(e.CompletionTime), "completed", e.Version, e.Image, previous.Version)
		break
	}
	created := float64(cv.CreationTimestamp.Unix())
	ch <- gauge(clusterVersionDesc, created, "initial", initial.Version, initial.Image, "")
	initialVersion := initial.Version
	if completed.Version == "" {
		// Still installing.
		initialVersion = ""
	}
	ch <- gauge(clusterVersionDesc, created, "cluster", cur.Version, cur.Image, initialVersion)
	if u := cv.Spec.DesiredUpdate; u != nil && u.Image != cur.Image {
		ch <- gauge(clusterVersionDesc, float64(latestChange(cv).Unix()), "desired", clip(u.Version, maxQuoted), clip(u.Image, maxQuoted), completed.Version)
	}
	for _, cond := range cv.Status.Conditions {
		if cond.Type == "Failing" && cond.Status == configv1.ConditionTrue {
			version, image := cur.Version, cur.Image
			if u := cv.Spec.DesiredUpdate; u != nil && u.Image != cur.Image {
				version, image = u.Version, u.Image
			}
			ch <- gauge(clusterVersionDesc, float64(cond.LastTransitionTime.Unix()), "failure", version, image, completed.Version)
		}
	}
	if len(h) > 0 && h[0].State == configv1.PartialUpdate {
		ch <- gauge(clusterVersionDesc, float64(h[0].StartedTime.Unix()), "updating", h[0].Version, h[0].Image, completed.Version)
	}
	if cv.Spec.Upstream != "" || cv.Spec.Channel != "" {
		ch <- gauge(availableUpdatesDesc, float64(len(cv.Status.AvailableUpdates)), string(cv.Spec.Upstream), cv.Spec.Channel)
	}
	enabled := map[configv1.ClusterVersionCapability]bool{}
	for _, c := range cv.Status.Capabilities.EnabledCapabilities {
		enabled[c] = true
		ch <- gauge(capabilityDesc, 1, string(c))
	}
	for _, c := range cv.Status.Capabilities.KnownCapabilities {
		if !enabled[c] {
			ch <- gauge(capabilityDesc, 0, string(c))
		}
	}
	for _, cond := range cv.Status.Conditions {
		if cond.Status != configv1.ConditionTrue && cond.Status != configv1.ConditionFalse {
			continue
		}
		if cond.Type == configv1.OperatorAvailable {
			ch <- gauge(operatorUpDesc, boolValue(cond.Status), "version", completed.Version, cond.Reason)
		}
		ch <- gauge(operatorConditionsDesc, boolValue(cond.Status), "version", string(cond.Type), cond.Reason)
	}
	return completed.Version
}

// unix returns t in seconds since the epoch, 0 for nil.
func unix(t *metav1.Time) float64 {
	if t == nil {
		return 0
	}
	return float64(t.Unix())
}

// latestChange is the latest time the record's status changed: its
// newest history entry's start or completion, or a condition's
// transition.
func latestChange(cv *configv1.ClusterVersion) time.Time {
	var latest time.Time
	if h := cv.Status.History; len(h) > 0 {
		latest = h[0].StartedTime.Time
		if c := h[0].CompletionTime; c != nil && c.After(latest) {
			latest = c.Time
		}
	}
	for _, cond := range cv.Status.Conditions {
		if cond.LastTransitionTime.After(latest) {
			latest = cond.LastTransitionTime.Time
		}
	}
	return latest
}
