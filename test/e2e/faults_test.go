//go:build e2e

package e2e

import (
	"bufio"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/payload-apply/payload-apply/internal/realpayload"
	"github.com/payload-apply/payload-apply/test/apiserver"
	"github.com/payload-apply/payload-apply/test/clitest"
)

// reference is what an uninterrupted apply of the real payload leaves on
// the shared server, read once per test binary.
var reference struct {
	once     sync.Once
	objs     []planned
	state    map[string]string
	failures map[string]string
	Code     int
}

// referenceState returns the planned objects of the real payload, the
// state an uninterrupted apply leaves (cluster.state), its failures
// ("Kind/ns/name" to reason) and its exit code.
func referenceState(t *testing.T) ([]planned, map[string]string, map[string]string, int) {
	t.Helper()
	reference.once.Do(func() {
		objs := plannedObjects(t)
		s, r, events := applyRealToShared(t)
		reference.objs = objs
		reference.state = newCluster(t, s.RESTConfig()).state(t, objs)
		reference.failures = failures(events)
		reference.Code = r.Code
	})
	if reference.state == nil {
		t.Fatal("no reference state")
	}
	return reference.objs, reference.state, reference.failures, reference.Code
}

// transientReasons are the reasons a fault may add to the failures of an
// uninterrupted apply.
var transientReasons = map[string]bool{"ServerUnavailable": true, "Timeout": true, "Canceled": true}

// faultRun is the apply a fault hits.
type faultRun struct {
	t          *testing.T
	s          *apiserver.Server
	kubeconfig string
	bg         *clitest.Background[event]
	// proxy is set for faults that need one between apply and the server.
	proxy *stallProxy
}

// fault is one way a server misbehaves during an apply.
type fault struct {
	name string
	// opts are the options of the fresh server; setup may return another
	// kubeconfig to apply with.
	opts  apiserver.Options
	setup func(t *testing.T, s *apiserver.Server) (kubeconfig string, proxy *stallProxy)
	// args are extra flags of the faulted apply.
	args []string
	// after is how many tasks must be done before inject runs; inject nil:
	// the fault is the server's configuration.
	after  int
	inject func(r *faultRun)
	// check judges how the faulted apply ended, beyond the common checks;
	// nil: it must end as an uninterrupted apply (exit code), with failures
	// an uninterrupted apply has or transient ones.
	check func(t *testing.T, r *faultRun, code int, events []event)
}

// TestFaults applies the real payload to a fresh server while the server
// fails in one way or another, then applies again: the first apply must end
// (never hang) with every failure classified, and the second must leave
// exactly what an uninterrupted apply leaves: every object once, nothing
// else of the payload's types, and the status an operator wrote on its
// ClusterOperator in between untouched.
func TestFaults(t *testing.T) {
	faults := []fault{
		{
			name:  "kube-apiserver killed and restarted",
			after: 150,
			inject: func(r *faultRun) {
				if err := r.s.Kill(apiserver.APIServer); err != nil {
					r.t.Fatal(err)
				}
				time.Sleep(2 * time.Second)
				if err := r.s.Restart(r.t.Context(), apiserver.APIServer); err != nil {
					r.t.Fatal(err)
				}
			},
		},
		{
			name:  "etcd killed and restarted",
			after: 150,
			inject: func(r *faultRun) {
				if err := r.s.Kill(apiserver.Etcd); err != nil {
					r.t.Fatal(err)
				}
				time.Sleep(2 * time.Second)
				if err := r.s.Restart(r.t.Context(), apiserver.Etcd); err != nil {
					r.t.Fatal(err)
				}
			},
		},
		{
			name: "load shedding (429)",
			// The legacy max-in-flight filter answers 429 with
			// Retry-After: 1 as soon as more requests than the limit are
			// in flight; priority and fairness would queue them instead.
			opts: apiserver.Options{APIServerFlags: []string{"--enable-priority-and-fairness=false",
				"--max-requests-inflight=1", "--max-mutating-requests-inflight=1"}},
			setup: func(t *testing.T, s *apiserver.Server) (string, *stallProxy) {
				// system:masters is never limited: apply as a service
				// account bound to cluster-admin.
				return serviceAccountKubeconfig(t, s), nil
			},
			check: func(t *testing.T, r *faultRun, code int, events []event) {
				n := requestsAnswered(t, r.s, "429")
				t.Logf("kube-apiserver answered %d requests with 429", n)
				if n == 0 {
					t.Error("the server shed no load: the test proves nothing")
				}
				checkLikeUninterrupted(t, r, code, events)
			},
		},
		{
			name: "stalled connection",
			setup: func(t *testing.T, s *apiserver.Server) (string, *stallProxy) {
				u, err := url.Parse(s.URL())
				if err != nil {
					t.Fatal(err)
				}
				p := newStallProxy(t, u.Host)
				return kubeconfigWith(t, s, func(cfg *clientcmdConfig) { cfg.server = "https://" + p.Addr() }), p
			},
			args:  []string{"--request-timeout=5s"},
			after: 150,
			inject: func(r *faultRun) {
				n := r.proxy.Stall(8 * time.Second)
				r.t.Logf("froze %d connections; new ones wait 8s", n)
				if n == 0 {
					r.t.Error("no connection to freeze: the test proves nothing")
				}
			},
		},
		{
			// Longer than the retry window (shortened to keep the test
			// lean): the objects in flight fail as server unavailable,
			// the apply ends, and the re-run converges.
			// Late enough that ClusterOperators exist (see SIGINT).
			name:  "kube-apiserver down longer than the retry window",
			args:  []string{"--retry-timeout=5s"},
			after: 450,
			inject: func(r *faultRun) {
				if err := r.s.Kill(apiserver.APIServer); err != nil {
					r.t.Fatal(err)
				}
				// The apply must end on its own while the server is down.
				select {
				case <-r.bg.Done():
				case <-time.After(90 * time.Second):
					r.t.Error("the apply did not end while the server was down")
				}
				if err := r.s.Restart(r.t.Context(), apiserver.APIServer); err != nil {
					r.t.Fatal(err)
				}
			},
			check: func(t *testing.T, r *faultRun, code int, events []event) {
				checkLikeUninterrupted(t, r, code, events)
				n := 0
				for _, reason := range failures(events) {
					if reason == "ServerUnavailable" {
						n++
					}
				}
				if n == 0 {
					t.Error("no object failed as ServerUnavailable: the outage was not seen")
				}
			},
		},
		{
			// Priority and fairness on (the default), with a priority
			// level for the applier that rejects what its seats cannot
			// take at once.
			name: "load shedding (429) with priority and fairness",
			setup: func(t *testing.T, s *apiserver.Server) (string, *stallProxy) {
				kc := serviceAccountKubeconfig(t, s)
				rejectingPriorityLevel(t, s)
				return kc, nil
			},
			check: func(t *testing.T, r *faultRun, code int, events []event) {
				n := requestsAnswered(t, r.s, "429")
				t.Logf("kube-apiserver answered %d requests with 429", n)
				if n == 0 {
					t.Error("the server shed no load: the test proves nothing")
				}
				checkLikeUninterrupted(t, r, code, events)
			},
		},
		{
			// Late enough that ClusterOperators exist: the install order
			// reaches them last in each component.
			name:  "SIGINT",
			after: 450,
			inject: func(r *faultRun) {
				if err := r.bg.Cmd.Process.Signal(os.Interrupt); err != nil {
					r.t.Fatal(err)
				}
			},
			check: checkInterrupted,
		},
	}
	objs, want, wantFailures, wantCode := referenceState(t)
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			start := time.Now()
			s := apiserver.New(t, f.opts)
			r := &faultRun{t: t, s: s, kubeconfig: s.Kubeconfig}
			if f.setup != nil {
				r.kubeconfig, r.proxy = f.setup(t, s)
			}
			ready := time.Now()
			args := append([]string{"apply", "--kubeconfig=" + r.kubeconfig, "--payload=" + realpayload.Dir(t), "-o", "json"}, f.args...)
			r.bg = startCLI(t, t.Context(), args...)
			injected := f.inject == nil
			for e := range r.bg.Events {
				if !injected && e.Event == "task" && *e.Done >= f.after {
					injected = true
					t.Logf("fault after %d of %d tasks", *e.Done, e.Total)
					f.inject(r)
				}
			}
			code, events := r.bg.Wait(t)
			faulted := time.Since(ready)
			if !injected {
				t.Fatalf("the apply ended (exit %d) before the fault", code)
			}
			// client-go's own reports of what failed meanwhile (a
			// discovery, a watch) never reach the user raw.
			for _, raw := range []string{"Unhandled Error", `logger="UnhandledError"`} {
				if strings.Contains(r.bg.Stderr.String(), raw) {
					t.Errorf("stderr has client-go's %q:\n%.4000s", raw, r.bg.Stderr.String())
				}
			}
			t.Logf("faulted apply: exit %d in %s; slow objects waited for: %s", code, faulted.Round(100*time.Millisecond), slowWaits(events))
			if f.check != nil {
				f.check(t, r, code, events)
			} else {
				checkLikeUninterrupted(t, r, code, events)
			}
			if t.Failed() {
				t.Logf("stderr of the faulted apply:\n%.4000s", r.bg.Stderr.String())
			}

			// The operators write their status; the re-run must leave it.
			c, err := dynamic.NewForConfig(s.RESTConfig())
			if err != nil {
				t.Fatal(err)
			}
			statuses := writeOperatorStatus(t, c)

			rerun := time.Now()
			r2 := cli(t, t.Context(), "apply", "--kubeconfig="+s.Kubeconfig, "--payload="+realpayload.Dir(t), "-o", "json")
			t.Logf("re-run: exit %d in %s; converged %s after the fault run started; %s in all",
				r2.Code, time.Since(rerun).Round(100*time.Millisecond), time.Since(ready).Round(100*time.Millisecond), time.Since(start).Round(100*time.Millisecond))
			if r2.Code != wantCode {
				t.Errorf("re-run: exit %d, want %d as uninterrupted:\n%.4000s", r2.Code, wantCode, r2.Stderr)
			}
			if diff := cmp.Diff(wantFailures, failures(parseEvents(t, r2.Stdout))); diff != "" {
				t.Errorf("re-run: failures differ from an uninterrupted apply (-uninterrupted +re-run):\n%s", diff)
			}
			if diff := cmp.Diff(want, newCluster(t, s.RESTConfig()).state(t, objs)); diff != "" {
				t.Errorf("state differs from an uninterrupted apply (-uninterrupted +faulted and re-run):\n%s", diff)
			}
			after := operatorStatus(t, c)
			for name := range after {
				if _, ok := statuses[name]; !ok {
					delete(after, name) // created by the re-run
				}
			}
			if diff := cmp.Diff(statuses, after); diff != "" {
				t.Errorf("ClusterOperator status changed by the re-run (-operator's +after):\n%s", diff)
			}
		})
	}
}

// slowWaits lists what the objects the apply reported as slow waited for
// ("applying", "retrying: server unavailable", "waiting for Established"),
// with how many objects said so.
func slowWaits(events []event) string {
	objs := map[string]map[string]bool{}
	for _, e := range events {
		if e.Event != "slow" {
			continue
		}
		for _, p := range e.Pending {
			why := p.Message
			if i := strings.LastIndex(why, " ("); i > 0 {
				why = why[:i]
			}
			if objs[why] == nil {
				objs[why] = map[string]bool{}
			}
			objs[why][p.Object] = true
		}
	}
	var out []string
	for why, o := range objs {
		out = append(out, fmt.Sprintf("%s (%d)", why, len(o)))
	}
	sort.Strings(out)
	if len(out) == 0 {
		return "nothing"
	}
	return strings.Join(out, ", ")
}

// checkLikeUninterrupted asserts that a faulted apply ended as an
// uninterrupted one would have, give or take transient failures, each
// classified.
func checkLikeUninterrupted(t *testing.T, r *faultRun, code int, events []event) {
	t.Helper()
	_, _, wantFailures, wantCode := referenceState(t)
	sum := summaryOf(t, events)
	got := failures(events)
	var extra []string
	for obj, reason := range got {
		switch want, ok := wantFailures[obj]; {
		case ok && want == reason:
		case transientReasons[reason]:
			extra = append(extra, obj+": "+reason)
		default:
			t.Errorf("%s failed as %q; uninterrupted: %q", obj, reason, want)
		}
	}
	sort.Strings(extra)
	if len(extra) > 0 {
		t.Logf("%d transient failures: %s", len(extra), strings.Join(extra, ", "))
	}
	if code != wantCode {
		t.Errorf("exit %d, want %d", code, wantCode)
	}
	if *sum.Done != sum.Total && len(extra) == 0 {
		t.Errorf("%d of %d tasks done, and no failure says why", *sum.Done, sum.Total)
	}
	for _, e := range sum.Errors {
		if strings.Contains(e, ": error: ") {
			t.Errorf("unclassified error: %s", e)
		}
	}
}

// checkInterrupted asserts that SIGINT stopped the apply cleanly: exit 130,
// a line saying so with what was done, no panic, and a summary event.
func checkInterrupted(t *testing.T, r *faultRun, code int, events []event) {
	t.Helper()
	stderr := r.bg.Stderr.String()
	if code != 130 {
		t.Errorf("exit %d, want 130", code)
	}
	for _, bad := range []string{"panic:", "goroutine ", "DATA RACE"} {
		if strings.Contains(stderr, bad) {
			t.Errorf("stderr has %q:\n%.4000s", bad, stderr)
		}
	}
	sum := summaryOf(t, events)
	if sum.Interrupted == nil || !*sum.Interrupted {
		t.Errorf("the summary does not say it was interrupted: %+v", sum)
	}
	// Objects, not the components' steps, which are tasks too.
	applied, total := 0, len(reference.objs)
	for _, e := range events {
		if e.Event == "task" && e.Step == "" && e.Action != "Failed" {
			applied++
		}
	}
	wantLine := fmt.Sprintf("interrupted: %d of %d objects applied", applied, total)
	if !strings.Contains(stderr, wantLine) {
		t.Errorf("stderr lacks %q:\n%.4000s", wantLine, stderr)
	}
	// The only errors are those an uninterrupted apply has: what the
	// interrupt stopped is counted, not listed.
	for _, line := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(line, "error: ") && !strings.Contains(line, ": resource type missing: ") && !strings.Contains(line, ": namespace missing: ") {
			t.Errorf("error not of an uninterrupted apply: %s", line)
		}
	}
	if !strings.Contains(stderr, "run the same command again to finish") {
		t.Errorf("stderr does not say how to finish:\n%.4000s", stderr)
	}
	if applied == 0 || applied >= total {
		t.Errorf("%d of %d applied: the interrupt came too early or too late", applied, total)
	}
	for _, e := range events {
		if e.Event == "task" && e.Action == "Failed" && e.Reason != "Canceled" {
			if _, ok := reference.failures[e.object()]; !ok {
				t.Errorf("%s failed as %s: %s", e.object(), e.Reason, e.Error)
			}
		}
	}
	t.Logf("interrupted after %d of %d objects applied", applied, total)
}

// writeOperatorStatus plays the operators: every ClusterOperator gets a
// status. It returns the statuses written.
func writeOperatorStatus(t *testing.T, c dynamic.Interface) map[string]any {
	t.Helper()
	l, err := c.Resource(clusterOperators).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Items) == 0 {
		t.Fatal("no ClusterOperator to write a status on")
	}
	for _, co := range l.Items {
		setOperatorStatus(t, t.Context(), c, co.GetName(), "4.99.0-operator",
			condition("Available", "True"), condition("Degraded", "False"), condition("Progressing", "False", "AsExpected", "written by the operator"))
	}
	return operatorStatus(t, c)
}

// operatorStatus maps every ClusterOperator's name to its status.
func operatorStatus(t *testing.T, c dynamic.Interface) map[string]any {
	t.Helper()
	l, err := c.Resource(clusterOperators).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	for _, co := range l.Items {
		st, _, _ := unstructured.NestedMap(co.Object, "status")
		out[co.GetName()] = st
	}
	return out
}

// requestsAnswered counts the requests kube-apiserver answered with code,
// by its apiserver_request_total metric.
func requestsAnswered(t *testing.T, s *apiserver.Server, code string) int {
	t.Helper()
	cs, err := kubernetes.NewForConfig(s.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	body, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	sc := bufio.NewScanner(strings.NewReader(string(body)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "apiserver_request_total{") || !strings.Contains(line, `code="`+code+`"`) {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			t.Fatalf("metric line %q: %v", line, err)
		}
		n += int(v)
	}
	return n
}

// clientcmdConfig is what kubeconfigWith may change.
type clientcmdConfig struct {
	server, token string
}

// kubeconfigWith writes a copy of s's kubeconfig with changes and returns
// its path.
func kubeconfigWith(t *testing.T, s *apiserver.Server, change func(*clientcmdConfig)) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(s.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	ctx := cfg.Contexts[cfg.CurrentContext]
	c := clientcmdConfig{server: cfg.Clusters[ctx.Cluster].Server, token: cfg.AuthInfos[ctx.AuthInfo].Token}
	change(&c)
	cfg.Clusters[ctx.Cluster].Server = c.server
	cfg.AuthInfos[ctx.AuthInfo].Token = c.token
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// serviceAccountKubeconfig returns a kubeconfig for a service account bound
// to cluster-admin: unlike the admin's group system:masters, it is subject
// to the server's in-flight limits.
// rejectingPriorityLevel puts the requests of serviceAccountKubeconfig's
// service account in a priority level of their own, with the smallest
// share of the server's concurrency and limit response Reject: what its
// few seats cannot take at once is answered 429 by priority and fairness.
func rejectingPriorityLevel(t *testing.T, s *apiserver.Server) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(s.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	shares := int32(1)
	lendable := int32(0)
	plc := &flowcontrolv1.PriorityLevelConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "payload-apply-e2e"},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
			Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
				NominalConcurrencyShares: &shares,
				LendablePercent:          &lendable,
				LimitResponse:            flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject},
			},
		},
	}
	if _, err := cs.FlowcontrolV1().PriorityLevelConfigurations().Create(ctx, plc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	fs := &flowcontrolv1.FlowSchema{
		ObjectMeta: metav1.ObjectMeta{Name: "payload-apply-e2e"},
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: plc.Name},
			MatchingPrecedence:         100,
			DistinguisherMethod:        &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects: []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindServiceAccount,
					ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Namespace: "default", Name: "payload-apply"}}},
				ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"},
					ClusterScope: true, Namespaces: []string{"*"}}},
				NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}},
			}},
		},
	}
	if _, err := cs.FlowcontrolV1().FlowSchemas().Create(ctx, fs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The API server's configuration controller takes the new objects
	// up within a second or so.
	time.Sleep(2 * time.Second)
}

func serviceAccountKubeconfig(t *testing.T, s *apiserver.Server) string {
	t.Helper()
	cs, err := kubernetes.NewForConfig(s.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	const ns, name = "default", "payload-apply"
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "payload-apply-e2e"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns, Name: name}},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	exp := int64(3600)
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return kubeconfigWith(t, s, func(c *clientcmdConfig) { c.token = tr.Status.Token })
}
