package clusterversion

import (
	"fmt"

	"github.com/blang/semver/v4"
)

// UpdateType says how a target version relates to the current one.
type UpdateType string

// The update types.
const (
	// UpdateSame is the same version (a re-apply, or another image of it).
	UpdateSame UpdateType = "same"
	// UpdatePatch is a z-stream update: same major and minor, higher.
	UpdatePatch UpdateType = "z-stream"
	// UpdateMinor is a higher minor version of the same major.
	UpdateMinor UpdateType = "minor"
	// UpdateMajor is a higher major version.
	UpdateMajor UpdateType = "major"
	// UpdateDowngrade is a lower version.
	UpdateDowngrade UpdateType = "downgrade"
)

// UpdateTypeOf classifies the update from current to target (semantic
// versions, pre-release parts compared as semver does). An error names a
// version that does not parse.
func UpdateTypeOf(current, target string) (UpdateType, error) {
	c, err := semver.Parse(current)
	if err != nil {
		return "", fmt.Errorf("current version %q: %w", current, err)
	}
	t, err := semver.Parse(target)
	if err != nil {
		return "", fmt.Errorf("target version %q: %w", target, err)
	}
	switch {
	case t.EQ(c):
		return UpdateSame, nil
	case t.LT(c):
		return UpdateDowngrade, nil
	case t.Major > c.Major:
		return UpdateMajor, nil
	case t.Minor > c.Minor:
		return UpdateMinor, nil
	}
	return UpdatePatch, nil
}

// minorOf returns "y" of "x.y.z", or "" when there is no second part (the
// CVO's getEffectiveMinor, which the history's pruning uses).
func minorOf(v string) string { return part(v, 1) }

// patchOf returns "z" of "x.y.z", or "".
func patchOf(v string) string { return part(v, 2) }

func part(v string, i int) string {
	start, n := 0, 0
	for j := 0; j <= len(v); j++ {
		if j == len(v) || v[j] == '.' {
			if n == i {
				return v[start:j]
			}
			n++
			start = j + 1
		}
	}
	return ""
}
