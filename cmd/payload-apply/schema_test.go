package main

import (
	"encoding/json"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

// schemaNode is the part of a JSON Schema the test compares.
type schemaNode struct {
	Properties map[string]*schemaNode `json:"properties"`
	Items      *schemaNode            `json:"items"`
	Const      any                    `json:"const"`
}

// jsonNames returns the JSON field names of struct type t.
func jsonNames(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

func keys(m map[string]*schemaNode) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestEventSchema: docs/apply-events.schema.json describes exactly the
// fields apply -o json writes, and its version is the one written.
func TestEventSchema(t *testing.T) {
	data, err := os.ReadFile("../../docs/apply-events.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var root schemaNode
	if err := json.Unmarshal(data, &root); err != nil {
		t.Fatalf("docs/apply-events.schema.json: %v", err)
	}
	for _, tc := range []struct {
		name   string
		schema *schemaNode
		typ    reflect.Type
	}{
		{"event", &root, reflect.TypeOf(jsonEvent{})},
		{"pending", root.Properties["pending"].Items, reflect.TypeOf(jsonPending{})},
		{"requests", root.Properties["requests"], reflect.TypeOf(jsonRequests{})},
		{"wait", root.Properties["wait"], reflect.TypeOf(jsonWait{})},
	} {
		if diff := cmp.Diff(jsonNames(tc.typ), keys(tc.schema.Properties)); diff != "" {
			t.Errorf("%s: fields (-written +documented):\n%s", tc.name, diff)
		}
	}
	if v := root.Properties["schemaVersion"].Const; v != float64(eventSchemaVersion) {
		t.Errorf("schemaVersion %v documented, %d written", v, eventSchemaVersion)
	}
}

// TestCLIDoc: docs/cli.md has a row for every command, naming every flag
// of its own (the selection and cluster flags as groups).
func TestCLIDoc(t *testing.T) {
	data, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if name, ok := strings.CutPrefix(line, "| `"); ok {
			name, _, _ = strings.Cut(name, "`")
			rows[name] = line
		}
	}
	selection := pflag.NewFlagSet("selection", pflag.ContinueOnError)
	var sel selectionFlags
	sel.addFlags(selection)
	cluster := pflag.NewFlagSet("cluster", pflag.ContinueOnError)
	var kube kubeFlags
	kube.addFlags(cluster)
	registry := pflag.NewFlagSet("registry", pflag.ContinueOnError)
	var reg registryFlags
	reg.addFlags(registry)
	verification := pflag.NewFlagSet("verification", pflag.ContinueOnError)
	var ver verifyFlags
	ver.addFlags(verification)
	for _, c := range commands() {
		row, ok := rows[c.name]
		if !ok {
			t.Errorf("docs/cli.md has no row for %s", c.name)
			continue
		}
		fs := pflag.NewFlagSet(c.name, pflag.ContinueOnError)
		c.flags(fs)
		fs.VisitAll(func(f *pflag.Flag) {
			switch {
			case f.Hidden || strings.Contains(row, "--"+f.Name):
			case f.Name == "output":
				if !strings.Contains(row, "`-o`") {
					t.Errorf("docs/cli.md: the row of %s does not name -o", c.name)
				}
			case registry.Lookup(f.Name) != nil:
				// The selection flags include them.
				if !strings.Contains(row, "registry flags") && !strings.Contains(row, "selection flags") {
					t.Errorf("docs/cli.md: %s takes the registry flags (--%s), its row does not say so", c.name, f.Name)
				}
			case verification.Lookup(f.Name) != nil:
				if !strings.Contains(row, "verification flags") {
					t.Errorf("docs/cli.md: %s takes the verification flags (--%s), its row does not say so", c.name, f.Name)
				}
			case selection.Lookup(f.Name) != nil:
				if !strings.Contains(row, "selection flags") {
					t.Errorf("docs/cli.md: %s takes the selection flags (--%s), its row does not say so", c.name, f.Name)
				}
			case cluster.Lookup(f.Name) != nil:
				if !strings.Contains(row, "cluster flags") {
					t.Errorf("docs/cli.md: %s takes the cluster flags (--%s), its row does not say so", c.name, f.Name)
				}
			default:
				t.Errorf("docs/cli.md: the row of %s does not name --%s", c.name, f.Name)
			}
		})
	}
}
