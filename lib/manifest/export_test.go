package manifest

// Hooks for the external tests of this package.
var (
	DecodeYAMLFast = func(data []byte) (*Manifest, bool) { return decodeYAMLFast(data, map[string]any{}) }
	DecodeSlow     = decodeSlow
)
