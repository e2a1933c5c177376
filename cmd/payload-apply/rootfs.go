package main

import "github.com/payload-apply/payload-apply/lib/safefs"

// rootFS is a directory given on the command line, read through os.Root
// so that no name, and no symbolic link, reaches outside it, and never
// blocking on a named pipe or device inside it (lib/safefs.Dir).
type rootFS = safefs.Dir
