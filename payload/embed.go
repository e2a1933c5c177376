package payload

import (
	"embed"
	"io/fs"
)

// reference is the reference payload compiled into the binary: small,
// realistic, written for this project (see payload/manifests and
// payload/release-manifests).
//
//go:embed manifests release-manifests
var reference embed.FS

// Embedded returns the reference payload, the default --payload.
func Embedded() fs.FS { return reference }
