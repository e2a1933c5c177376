package main

import (
	"encoding/json"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
