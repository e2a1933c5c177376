// Package updatefixture makes the releases of the update-graph tests: 22
// releases of the built-in payload (4.22.0 to 4.22.19, 4.23.0, 4.23.1)
// whose release-metadata form an update graph as OpenShift's do (every
// 4.22.z updates into each later 4.22 release; 4.22.15 and later into
// 4.23.0; 4.22.17 and later, and 4.23.0, into 4.23.1), written by
// internal/genupgrade and pushed to a registry as release images
// (lib/image), as `oc adm release new` would. The tests write their
// graph-data themselves.
//
// May import: internal/genupgrade, lib/image, lib/registry.
package updatefixture

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/payload-apply/payload-apply/internal/genupgrade"
	"github.com/payload-apply/payload-apply/lib/image"
	"github.com/payload-apply/payload-apply/lib/registry"
)

// Releases returns the releases' metadata, oldest first.
func Releases() []genupgrade.Metadata {
	var out []genupgrade.Metadata
	var z []string
	for i := 0; i < 20; i++ {
		v := fmt.Sprintf("4.22.%d", i)
		out = append(out, genupgrade.Metadata{Version: v, Previous: append([]string{}, z...), Metadata: map[string]string{"url": "https://errata.example.com/" + v}})
		z = append(z, v)
	}
	out = append(out,
		genupgrade.Metadata{Version: "4.23.0", Previous: z[15:], Metadata: map[string]string{"url": "https://errata.example.com/4.23.0"}},
		genupgrade.Metadata{Version: "4.23.1", Previous: append(append([]string{}, z[17:]...), "4.23.0"), Metadata: map[string]string{"url": "https://errata.example.com/4.23.1"}})
	return out
}

// Write writes each release's payload directory, from the payload at src
// (the built-in one: the repository's payload directory), to dir/VERSION,
// and returns the directories.
func Write(src, dir string) ([]string, error) {
	var dirs []string
	for _, md := range Releases() {
		d := filepath.Join(dir, md.Version)
		if err := genupgrade.Release(src, d, md); err != nil {
			return nil, fmt.Errorf("release %s: %w", md.Version, err)
		}
		dirs = append(dirs, d)
	}
	return dirs, nil
}

// Push builds the release image of each directory of Write (version from
// its directory's name) and pushes it to repo ("HOST/REPO") tagged with its
// version.
func Push(ctx context.Context, c *registry.Client, repo string, dirs []string) error {
	for _, d := range dirs {
		v := filepath.Base(d)
		img, err := image.Build(os.DirFS(d), image.BuildOptions{Version: v})
		if err != nil {
			return err
		}
		ref, err := c.ParseReference(repo + ":" + v)
		if err != nil {
			return err
		}
		if _, err := c.Push(ctx, ref, img); err != nil {
			return err
		}
	}
	return nil
}
