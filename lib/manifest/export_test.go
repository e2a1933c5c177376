package manifest

// Hooks for the external tests of this package.
var (
	DecodeYAMLFast = decodeYAMLFast
	DecodeSlow     = decodeSlow
)
