package main

import (
	"context"
	"strings"
	"sync"
)

// pathAliases turn the names the plan gives files of a directory flag
// ("extra/x.yaml" for --extra-manifests DIR) back into the path the user
// gave ("DIR/x.yaml") in errors and findings, which start with the file.
type pathAliases struct {
	mu      sync.Mutex
	byLabel map[string]string
}

type pathsKey struct{}

// withPaths returns ctx carrying a new, empty set of aliases.
func withPaths(ctx context.Context) context.Context {
	return context.WithValue(ctx, pathsKey{}, &pathAliases{byLabel: map[string]string{}})
}

// pathsOf returns ctx's aliases; an empty set when there are none.
func pathsOf(ctx context.Context) *pathAliases {
	if p, ok := ctx.Value(pathsKey{}).(*pathAliases); ok {
		return p
	}
	return &pathAliases{byLabel: map[string]string{}}
}

// add makes lines starting with label start with path instead.
func (p *pathAliases) add(label, path string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.byLabel[label] = path
}

// real returns line with a leading label replaced by its path.
func (p *pathAliases) real(line string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	for label, path := range p.byLabel {
		if rest, ok := strings.CutPrefix(line, label); ok {
			return path + rest
		}
	}
	return line
}
