package ntoequiv

import (
	"encoding/base64"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseProfile(t *testing.T) {
	p, err := ParseProfile(`[main]
summary=demo   # an inline comment
include=a,b${f:exec:uname:-r};
    c
; a comment
[cpu]
  # indented comment
governor = performance
governor=powersave
[bootloader]
cmdline_x=+ a   b
`)
	if err != nil {
		t.Fatal(err)
	}
	want := &Profile{Sections: []*Section{
		{Name: "main", Options: []Option{{"summary", "demo"}, {"include", "a,b${f:exec:uname:-r};\nc"}}},
		{Name: "cpu", Options: []Option{{"governor", "powersave"}}},
		{Name: "bootloader", Options: []Option{{"cmdline_x", "+ a   b"}}},
	}}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, bad := range []string{"key=value\n", "[s]\nnot an option\n", "  continued\n"} {
		if _, err := ParseProfile(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestExpand(t *testing.T) {
	const include = `base${f:regex_search_ternary:${f:exec:uname:-r}:rt:,rt-p:};vendor-${f:lscpu_check:Vendor ID\:\s*GenuineIntel:intel:Architecture\:\s*aarch64:arm}`
	cases := map[string]string{
		"intel":    "base;vendor-intel",
		"intel-rt": "base,rt-p;vendor-intel",
		"amd":      "base;vendor-",
		"arm-rt":   "base,rt-p;vendor-arm",
	}
	for _, h := range Hosts {
		want, ok := cases[h.Name]
		if !ok {
			continue
		}
		got, err := Expand(include, h)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: %q, want %q", h.Name, got, want)
		}
	}
	if _, err := Expand("${f:exec:uname", Hosts[0]); err == nil {
		t.Error("an unclosed function is not an error")
	}
}

func TestResolve(t *testing.T) {
	parse := func(s string) *Profile {
		p, err := ParseProfile(s)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	set := map[string]*Profile{
		"top":    parse("[main]\ninclude=system,${f:regex_search_ternary:${f:exec:uname:-r}:rt:rt,:}vendor\n[cpu]\na=top\n"),
		"rt":     parse("[sysctl]\ndrop=x\n"),
		"vendor": parse("[cpu]\na=vendor\nb=vendor\n"),
	}
	r, err := Resolve(set, "top", Hosts[1]) // intel-rt
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"system"}, r.External); diff != "" {
		t.Errorf("external (-want +got):\n%s", diff)
	}
	if got := EffectiveOptions(r.Merged.Section("cpu")); !cmp.Equal(got, []string{"a=top", "b=vendor"}) {
		t.Errorf("[cpu] %v", got)
	}
	if v, _ := r.Merged.Get("sysctl", "drop"); v != "x" {
		t.Errorf("[sysctl] drop %q", v)
	}
}

func TestEffectiveOptions(t *testing.T) {
	s := &Section{Name: "bootloader", Options: []Option{{"cmdline_a", "+ x   y "}, {"cmdline_b", "+"}, {"cmdline_c", "z"}, {"initrd", ""}}}
	want := []string{"cmdline_a=+x y", "cmdline_c=z", "initrd="}
	if diff := cmp.Diff(want, EffectiveOptions(s)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestUnitsEquivalent(t *testing.T) {
	a := "[Unit]\nDescription=A\nBefore=kubelet.service\n[Service]\nExecStart=/usr/bin/podman run \\\n  --rm \\\n  --net=host \\\n  image\n"
	b := "# ours\n[Unit]\nDescription=B\nBefore=kubelet.service\n\n[Service]\nExecStart=/usr/bin/podman run --net=host --rm image\n"
	if ok, why := unitsEquivalent(a, b); !ok {
		t.Errorf("not equivalent: %s", why)
	}
	c := "[Unit]\nBefore=kubelet.service\n[Service]\nExecStart=/usr/bin/podman run --net=host image\n"
	if ok, _ := unitsEquivalent(a, c); ok {
		t.Error("a command without --rm is equivalent")
	}
}

func TestCompare(t *testing.T) {
	src := func(s string) string {
		return "data:text/plain;charset=utf-8;base64," + base64.StdEncoding.EncodeToString([]byte(s))
	}
	mc := func(script, crio string, extra map[string]any) map[string]any {
		spec := map[string]any{
			"kernelType": "default",
			"config": map[string]any{
				"ignition": map[string]any{"version": "3.2.0"},
				"storage": map[string]any{"files": []any{
					map[string]any{"path": "/usr/local/bin/x.sh", "mode": 448, "contents": map[string]any{"source": src(script)}},
					map[string]any{"path": "/etc/crio/crio.conf.d/99-x.conf", "mode": 420, "contents": map[string]any{"source": src(crio)}},
				}},
			},
		}
		for k, v := range extra {
			spec[k] = v
		}
		return map[string]any{"kind": "MachineConfig", "metadata": map[string]any{"name": "x"}, "spec": spec}
	}
	nto := mc("#!/usr/bin/env bash\necho a\n", "[crio.runtime]\n# c\nx = \"1\"\n", map[string]any{"fips": false, "kernelArguments": nil})
	cases := []struct {
		name string
		ours map[string]any
		want Verdict
	}{
		{"same", mc("#!/usr/bin/env bash\necho a\n", "[crio.runtime]\n# c\nx = \"1\"\n", nil), Identical},
		{"other words", mc("#!/bin/bash\necho b\n", "[crio.runtime]\nx =   \"1\"\n", nil), Equivalent},
		{"other value", mc("#!/bin/bash\necho b\n", "[crio.runtime]\nx = \"2\"\n", nil), Different},
		{"kernel arguments", mc("#!/usr/bin/env bash\necho a\n", "[crio.runtime]\n# c\nx = \"1\"\n", map[string]any{"kernelArguments": []any{"a"}}), Different},
		{"none", nil, Missing},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Compare(nto, tc.ours); got.Verdict != tc.want {
				t.Errorf("%s, want %s: %v", got.Verdict, tc.want, got.Notes)
			}
		})
	}
}
