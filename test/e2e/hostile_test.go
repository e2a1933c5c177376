//go:build e2e

package e2e

import (
	"archive/tar"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/payload-apply/payload-apply/internal/hostile"
	"github.com/payload-apply/payload-apply/test/apiserver"
)

var clusterVersions = schema.GroupVersionResource{Group: "config.openshift.io", Version: "v1", Resource: "clusterversions"}

// requestLog is a proxy in front of the API server that records the
// method and path of every request the command sends.
type requestLog struct {
	mu       sync.Mutex
	requests []string
}

func (l *requestLog) writes() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, r := range l.requests {
		if !strings.HasPrefix(r, "GET ") {
			out = append(out, r)
		}
	}
	return out
}

// countingKubeconfig starts a recording proxy to s and writes a kubeconfig
// that points at it.
func countingKubeconfig(t *testing.T, s *apiserver.Server) (string, *requestLog) {
	t.Helper()
	cfg := s.RESTConfig()
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	target, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	log := &requestLog{}
	proxy := &httputil.ReverseProxy{Transport: transport, Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target) }}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.mu.Lock()
		log.requests = append(log.requests, r.Method+" "+r.URL.Path)
		log.mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	kc := clientcmdapi.NewConfig()
	kc.Clusters["proxy"] = &clientcmdapi.Cluster{Server: srv.URL}
	kc.AuthInfos["proxy"] = &clientcmdapi.AuthInfo{}
	kc.Contexts["proxy"] = &clientcmdapi.Context{Cluster: "proxy", AuthInfo: "proxy"}
	kc.CurrentContext = "proxy"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path, log
}

// included is a v1 object the default profile includes.
func included(kind, name, namespace string) string {
	s := "apiVersion: v1\nkind: " + kind + "\nmetadata:\n  name: " + name + "\n"
	if namespace != "" {
		s += "  namespace: " + namespace + "\n"
	}
	return s + "  annotations:\n    include.release.openshift.io/self-managed-high-availability: \"true\"\n"
}

// hostileFiles is a small payload with a Namespace and a ConfigMap, which
// each case spoils in one way.
var hostileFiles = map[string]string{
	"release-manifests/release-metadata":               `{"kind": "cincinnati-metadata-v0", "version": "4.22.0"}`,
	"release-manifests/image-references":               `{"kind": "ImageStream", "apiVersion": "image.openshift.io/v1", "metadata": {"name": "4.22.0"}, "spec": {"tags": []}}`,
	"release-manifests/0000_00_hostile_00_config.yaml": included("Namespace", "openshift-config", ""),
	"release-manifests/0000_50_hostile_00_ns.yaml":     included("Namespace", "hostile-e2e", ""),
	"release-manifests/0000_50_hostile_01_cm.yaml":     included("ConfigMap", "good", "hostile-e2e"),
	"../secret.yaml":                                  "apiVersion: v1\nkind: Secret\nmetadata: {name: stolen, namespace: hostile-e2e}\n",
	"../profiles/evil.yaml":                           "apiVersion: payload-apply/v1alpha1\nkind: ClusterProfile\nmetadata: {name: evil}\nspec:\n  overlays: [{name: evil}]\n",
	"../overlays/evil/kustomization.yaml":             "resources: [../../secret.yaml]\n",
	"release-manifests/0000_50_hostile_02_padding.no": "",
}

// writeHostilePayload writes hostileFiles plus extra ("-> TARGET": a symbolic
// link) under a new directory and returns the payload's path.
func writeHostilePayload(t *testing.T, extra map[string]string) string {
	dir := filepath.Join(t.TempDir(), "payload")
	hostile.WriteTree(t, dir, hostileFiles, extra)
	return dir
}

// writeImage writes a docker-archive of the payload's release-manifests
// plus a symbolic link out of the image, and returns its path.
func writeImage(t *testing.T) string {
	var entries []hostile.Entry
	for name, body := range hostileFiles {
		if strings.HasPrefix(name, "release-manifests/") {
			entries = append(entries, hostile.Entry{Name: name, Body: body})
		}
	}
	return hostile.Archive(t, append(entries, hostile.Entry{Name: "release-manifests/0000_50_hostile_03_link.yaml", Type: tar.TypeSymlink, Link: "../../../etc/passwd"})...)
}

// TestApplyHostilePayload applies hostile payloads to a real API server
// through a recording proxy: each is refused before anything is sent but
// reads (the cluster profile), with the exit code apply documents (2 for
// an image refused as a whole, 1 for a payload or overlay that does not
// load) and an error naming the file and what is wrong; the good
// Namespace beside the hostile file is not created either.
func TestApplyHostilePayload(t *testing.T) {
	s := apiserver.Shared(t)
	c, err := dynamic.NewForConfig(s.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	bomb := hostile.AliasBombConfigMap("lol", "hostile-e2e")
	cases := []struct {
		name    string
		payload func(t *testing.T) string
		args    []string
		Code    int
		want    string
	}{
		{name: "image with a link out of it", payload: func(t *testing.T) string { return writeImage(t) },
			Code: 2, want: `entry "release-manifests/0000_50_hostile_03_link.yaml": refused: link leaves the image root`},
		{name: "alias bomb", payload: func(t *testing.T) string {
			return writeHostilePayload(t, map[string]string{"release-manifests/0000_50_hostile_02_bomb.yaml": bomb})
		}, Code: 1, want: "release-manifests/0000_50_hostile_02_bomb.yaml#0: yaml: document contains excessive aliasing"},
		{name: "link out of the payload", payload: func(t *testing.T) string {
			return writeHostilePayload(t, map[string]string{"release-manifests/0000_50_hostile_02_link.yaml": "-> ../../secret.yaml"})
		}, Code: 1, want: "release-manifests/0000_50_hostile_02_link.yaml: symbolic link leads outside the payload directory"},
		{name: "overlay reaching out", payload: func(t *testing.T) string { return writeHostilePayload(t, nil) },
			args: []string{"--profile=evil", "--profiles-dir=@/../profiles", "--overlays-dir=@/../overlays"},
			Code: 1, want: `overlays/evil/kustomization.yaml: resources[0] "../../secret.yaml": refers outside the overlay directory evil`},
		{name: "a named pipe", payload: func(t *testing.T) string {
			return writeHostilePayload(t, map[string]string{"release-manifests/0000_50_hostile_02_fifo.yaml": hostile.FIFO})
		}, Code: 1, want: "release-manifests/0000_50_hostile_02_fifo.yaml: not a regular file: a named pipe (FIFO)"},
		{name: "an image image-references lacks", payload: func(t *testing.T) string {
			return writeHostilePayload(t, map[string]string{"manifests/0000_00_cluster-version-operator_99_x.yaml": included("ConfigMap", "x", "hostile-e2e") + "data: {image: '{{index .Images \"nope\"}}'}\n"})
		}, Code: 1, want: `manifests/0000_00_cluster-version-operator_99_x.yaml: image-references has no such tag: "nope"`},
		{name: "replicas three", payload: func(t *testing.T) string {
			return writeHostilePayload(t, map[string]string{"release-manifests/0000_50_hostile_02_d.yaml": strings.Replace(included("Deployment", "d", "hostile-e2e"), "apiVersion: v1", "apiVersion: apps/v1", 1) + "spec: {replicas: three}\n"})
		}, Code: 1, want: "release-manifests/0000_50_hostile_02_d.yaml#0: Deployment.apps/hostile-e2e/d: spec.replicas: must be of type int32, not string"},
		{name: "kind List", payload: func(t *testing.T) string {
			return writeHostilePayload(t, map[string]string{"release-manifests/0000_50_hostile_02_l.yaml": included("List", "l", "") + "items: [{apiVersion: v1, kind: ConfigMap, metadata: {name: in-list, namespace: hostile-e2e}}]\n"})
		}, Code: 1, want: "release-manifests/0000_50_hostile_02_l.yaml#0: List/l: kind: List is a client-side list"},
		{name: "a numeric annotation", payload: func(t *testing.T) string {
			return writeHostilePayload(t, map[string]string{"release-manifests/0000_50_hostile_02_a.yaml": included("ConfigMap", "a", "hostile-e2e") + "    replicas: 3\n"})
		}, Code: 1, want: "release-manifests/0000_50_hostile_02_a.yaml#0: ConfigMap/a: metadata.annotations[replicas]: must be a string, not the number 3 (quote it)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			kubeconfig, log := countingKubeconfig(t, s)
			payload := tc.payload(t)
			args := []string{"apply", "--kubeconfig=" + kubeconfig, "--payload=" + payload, "--timeout=1m"}
			for _, a := range tc.args {
				args = append(args, strings.ReplaceAll(a, "@", payload))
			}
			r := cli(t, t.Context(), args...)
			if r.Code != tc.Code || !strings.Contains(r.Stderr, tc.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d and %q", r.Code, r.Stderr, tc.Code, tc.want)
			}
			if w := log.writes(); len(w) > 0 {
				t.Errorf("the command sent %d writes: %q", len(w), w)
			}
			if _, err := c.Resource(namespaces).Get(t.Context(), "hostile-e2e", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("namespace hostile-e2e exists (err %v)", err)
			}
		})
	}
	// The control: the same payload, unspoilt, goes through the same proxy
	// as a server-side dry run (which leaves the shared server as it is),
	// and the proxy sees its writes.
	t.Run("control", func(t *testing.T) {
		kubeconfig, log := countingKubeconfig(t, s)
		payload := writeHostilePayload(t, nil)
		// apply refuses a release other than the one the shared server
		// runs (when another test installed one): be that release.
		if cv, err := c.Resource(clusterVersions).Get(t.Context(), "version", metav1.GetOptions{}); err == nil {
			if h, _, _ := unstructured.NestedSlice(cv.Object, "status", "history"); len(h) > 0 {
				v, _, _ := unstructured.NestedString(h[0].(map[string]any), "version")
				for name, body := range map[string]string{
					"release-metadata": fmt.Sprintf(`{"kind": "cincinnati-metadata-v0", "version": %q}`, v),
					"image-references": fmt.Sprintf(`{"kind": "ImageStream", "apiVersion": "image.openshift.io/v1", "metadata": {"name": %q}, "spec": {"tags": []}}`, v),
				} {
					if err := os.WriteFile(filepath.Join(payload, "release-manifests", name), []byte(body), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		r := cli(t, t.Context(), "apply", "--kubeconfig="+kubeconfig, "--payload="+payload, "--timeout=1m", "--dry-run=server")
		if r.Code != 0 {
			t.Fatalf("exit %d, stderr:\n%s", r.Code, r.Stderr)
		}
		if len(log.writes()) == 0 {
			t.Error("the proxy saw no writes")
		}
		if _, err := c.Resource(namespaces).Get(t.Context(), "hostile-e2e", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("a dry run created namespace hostile-e2e (err %v)", err)
		}
	})
}
