package overlays

import (
	"embed"
	"io/fs"
)

// Label prefixes the paths of the embedded overlays in messages.
const Label = "embedded:overlays/"

//go:embed */*
var embedded embed.FS

// FS returns the embedded overlays: one directory per overlay at the top.
func FS() fs.FS { return embedded }
