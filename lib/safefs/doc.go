// Package safefs opens the files and directories a user names on the
// command line without the two surprises the file system holds for a
// program that reads them: special files and symbolic links.
//
// A named pipe (FIFO) with no writer blocks open(2) for good, and a
// character device such as /dev/zero never ends; so every file is checked
// before it is opened (stat) and again once open (fstat: the name may
// have changed in between), and opened with O_NONBLOCK, which makes the
// open of a FIFO return at once. Anything but a regular file (or, where a
// directory is asked for, a directory) is refused with a *SpecialFileError.
//
// Dir reads a directory through os.Root, so that no name and no symbolic
// link inside it reaches outside it; Output writes a directory the same
// way, so that a symbolic link inside the output directory cannot lead a
// write out of it, and files are replaced by rename, never written
// through whatever stood at their place.
//
// May import: nothing.
// Cluster I/O: none.
package safefs
