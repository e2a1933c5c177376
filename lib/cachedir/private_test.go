package cachedir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPrivate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, root string) string // returns the cache dir
		want  string                                 // "" no error
	}{
		{"missing: made private", func(t *testing.T, root string) string { return filepath.Join(root, "a", "cache") }, ""},
		{"private", func(t *testing.T, root string) string { return mkdir(t, filepath.Join(root, "cache"), 0o700) }, ""},
		{"under a sticky world-writable directory (/tmp)", func(t *testing.T, root string) string {
			d := mkdir(t, filepath.Join(root, "tmp"), 0o777|os.ModeSticky)
			return mkdir(t, filepath.Join(d, "cache"), 0o700)
		}, ""},
		{"writable by anyone", func(t *testing.T, root string) string { return mkdir(t, filepath.Join(root, "cache"), 0o777) },
			"is writable by others (mode 0777): anyone who can write it can forge entries; make it private (chmod 700 "},
		{"writable by its group", func(t *testing.T, root string) string { return mkdir(t, filepath.Join(root, "cache"), 0o770) },
			"is writable by others (mode 0770)"},
		{"a link to a user's directory", func(t *testing.T, root string) string {
			user := mkdir(t, filepath.Join(root, "documents"), 0o700)
			link := filepath.Join(root, "cache")
			if err := os.Symlink(user, link); err != nil {
				t.Fatal(err)
			}
			return link
		}, "a symbolic link, not the cache's own directory"},
		{"under a directory anyone can write", func(t *testing.T, root string) string {
			d := mkdir(t, filepath.Join(root, "shared"), 0o777)
			return mkdir(t, filepath.Join(d, "cache"), 0o700)
		}, "a directory above the cache, is writable by others (mode 0777)"},
		{"owned by another user", func(t *testing.T, root string) string {
			if os.Geteuid() != 0 {
				t.Skip("needs root to give a directory to another user")
			}
			d := mkdir(t, filepath.Join(root, "cache"), 0o700)
			if err := os.Chown(d, 4242, 4242); err != nil {
				t.Fatal(err)
			}
			return d
		}, "is owned by uid 4242, not by this user (uid 0)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := mkdir(t, filepath.Join(t.TempDir(), "r"), 0o755)
			dir := tc.setup(t, root)
			err := Private(dir)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
					t.Errorf("%s: %v, mode %v: want 0700", dir, err, st.Mode())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func mkdir(t *testing.T, p string, mode os.FileMode) string {
	t.Helper()
	if err := os.MkdirAll(p, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}
