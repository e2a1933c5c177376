package platformoperators

import (
	"io/fs"
	"os"
	"path/filepath"
)

// testdataFS returns testdata/<dir> as a file system.
func testdataFS(dir string) fs.FS {
	return os.DirFS(filepath.Join("testdata", dir))
}
