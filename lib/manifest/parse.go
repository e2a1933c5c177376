package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	lgmanifest "github.com/openshift/library-go/pkg/manifest"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// Manifest is one object of a payload file: library-go's manifest (GVK and
// the unstructured Obj) plus where it came from.
//
// library-go's Raw (the object as JSON) is not kept: it is nil in every
// Manifest this module makes. It would add about two thirds of the
// payload's size on disk to the memory of every command, and nothing reads
// it; marshal Obj when JSON is needed.
type Manifest struct {
	lgmanifest.Manifest

	// File is the slash-separated path of the source file relative to the
	// payload root, e.g. "release-manifests/0000_50_x_deployment.yaml".
	File string
	// Doc is the 0-based position of the document in its file, counting
	// empty documents (the same numbering as yq's documentIndex).
	Doc int
	// Line is the 1-based line of the file where the document starts.
	Line int
}

// ID identifies an object the way the CVO does: group, kind, namespace and
// name. Two manifests with the same ID describe the same cluster object.
type ID struct {
	Group     string
	Kind      string
	Namespace string
	Name      string
}

// String prints the ID as Kind/namespace/name (Kind.group for non-core groups;
// no namespace segment for cluster-scoped objects).
func (id ID) String() string {
	kind := id.Kind
	if id.Group != "" {
		kind += "." + id.Group
	}
	if id.Namespace == "" {
		return kind + "/" + id.Name
	}
	return kind + "/" + id.Namespace + "/" + id.Name
}

// Ref prints the ID as Kind/namespace/name, or Kind/name for a
// cluster-scoped object, without the group: the short form messages use
// for a kind whose group is plain from the context.
func (id ID) Ref() string {
	if id.Namespace == "" {
		return id.Kind + "/" + id.Name
	}
	return id.Kind + "/" + id.Namespace + "/" + id.Name
}

// ID returns the object's identity.
func (m *Manifest) ID() ID {
	return ID{Group: m.GVK.Group, Kind: m.GVK.Kind, Namespace: m.Obj.GetNamespace(), Name: m.Obj.GetName()}
}

// Position returns "FILE#DOC", the way every message about a manifest
// starts; FILE is quoted (QuoteName) when it holds characters a terminal
// or a record would not show as they are.
func (m *Manifest) Position() string {
	return fmt.Sprintf("%s#%d", QuoteName(m.File), m.Doc)
}

// String prints the manifest as "FILE#DOC Kind/ns/name".
func (m *Manifest) String() string {
	return m.Position() + " " + m.ID().String()
}

// ParseError is a problem with one document of one file. Doc is -1 when the
// problem is with the file as a whole (for example, it is not UTF-8).
type ParseError struct {
	File string
	Doc  int
	Line int
	Err  error
}

// Error prints "FILE#DOC: message" (or "FILE: message" for file-level
// errors), FILE quoted as QuoteName quotes it.
func (e *ParseError) Error() string {
	if e.Doc < 0 {
		return fmt.Sprintf("%s: %v", QuoteName(e.File), e.Err)
	}
	return fmt.Sprintf("%s#%d: %v", QuoteName(e.File), e.Doc, e.Err)
}

// Unwrap returns the underlying error.
func (e *ParseError) Unwrap() error { return e.Err }

// Document is one raw document of a file, before it is decoded.
type Document struct {
	// Index is the 0-based document index (see Manifest.Doc).
	Index int
	// Line is the 1-based line where the document starts.
	Line int
	// Data is the document's text (YAML or JSON).
	Data []byte
	// JSON is true when the document came from a JSON stream.
	JSON bool
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// SplitDocuments splits a file into its documents, with the same rules as
// apimachinery's YAMLOrJSONDecoder (and so library-go's ParseManifests): a
// file whose first non-space byte is '{' is a stream of JSON values, anything
// else is YAML separated by lines that start with "---". A leading UTF-8 byte
// order mark is ignored. Empty documents are returned too (with empty Data) so
// that indexes match the file; a comment or blank preamble before the first
// separator is not a document.
func SplitDocuments(data []byte) ([]Document, error) {
	data = bytes.TrimPrefix(data, utf8BOM)
	if !utf8.Valid(data) {
		return nil, errors.New("file is not valid UTF-8")
	}
	if hasJSONPrefix(data) {
		if docs, ok, err := splitJSON(data); ok {
			return docs, err
		}
	}
	return splitYAML(data)
}

func hasJSONPrefix(b []byte) bool {
	return bytes.HasPrefix(bytes.TrimLeftFunc(b, unicode.IsSpace), []byte("{"))
}

// splitJSON decodes a stream of JSON values. ok is false when the stream is not
// JSON after all and should be read as YAML (as the apimachinery decoder does
// when at most one value decoded before a syntax error).
func splitJSON(data []byte) (docs []Document, ok bool, err error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var start int64
	for i := 0; ; i++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if err == io.EOF {
				return docs, true, nil
			}
			if len(docs) > 1 {
				return nil, true, fmt.Errorf("document %d: %w", i, err)
			}
			return nil, false, nil
		}
		off := dec.InputOffset()
		lead := len(data[start:off]) - len(bytes.TrimLeftFunc(data[start:off], unicode.IsSpace))
		line := 1 + bytes.Count(data[:int(start)+lead], []byte("\n"))
		docs = append(docs, Document{Index: i, Line: line, Data: []byte(raw), JSON: true})
		start = off
	}
}

func splitYAML(data []byte) ([]Document, error) {
	var docs []Document
	line, docLine := 0, 1
	seenSeparator := false
	// A document is the run of lines between two separators, so its Data is
	// a slice of data (the separator lines are left out).
	docStart := 0
	flush := func(end int) {
		// Before the first separator, a blank or comment-only preamble is no
		// document; after it, every chunk is one (empty ones included).
		chunk := data[docStart:end:end]
		if seenSeparator || !isBlankYAML(chunk) {
			docs = append(docs, Document{Index: len(docs), Line: docLine, Data: chunk})
		}
	}
	for pos := 0; pos < len(data); {
		next := len(data)
		if i := bytes.IndexByte(data[pos:], '\n'); i >= 0 {
			next = pos + i + 1
		}
		text := data[pos:next]
		line++
		if bytes.HasPrefix(text, []byte("---")) {
			rest := strings.TrimSpace(string(text[3:]))
			if rest != "" && rest[0] != '#' {
				return nil, fmt.Errorf("line %d: invalid YAML document separator: %s", line, rest)
			}
			flush(pos)
			seenSeparator = true
			docLine = line + 1
			docStart = next
		}
		pos = next
	}
	if docStart < len(data) {
		flush(len(data))
	}
	return docs, nil
}

// isBlankYAML reports whether b holds only whitespace and comments.
func isBlankYAML(b []byte) bool {
	for len(b) > 0 {
		l := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			l, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		l = bytes.TrimSpace(l)
		if len(l) > 0 && l[0] != '#' {
			return false
		}
	}
	return true
}

var yamlLineRE = regexp.MustCompile(`line (\d+)`)

// ParseOptions say how Parse reads a file. The zero value applies
// DefaultLimits.
type ParseOptions struct {
	// Limits bound the file's size, each document's size and each
	// object's depth; zero fields take DefaultLimits' values.
	Limits Limits
}

// Parse decodes every document of one file into manifests, through library-go's
// Manifest decoding (the same YAML-to-JSON conversion and universal decoder
// that ParseManifests uses, so values such as a bare "=" or repeated keys
// come out exactly as the CVO sees them). Empty, null and comment-only
// documents are skipped. Every bad document is reported as a *ParseError in
// the joined error, and the good ones are still returned.
//
// A document whose metadata.namespace is not a string, or whose labels or
// annotations are not maps of strings, is a *ParseError naming the object
// and each field (the others are still returned): the API server refuses
// such an object, and the accessors every later step reads it through
// would silently see no namespace, or no labels or annotations (so no
// inclusion annotation: excluded everywhere). What else CheckObject finds
// is left to lib/apicheck (validate, and apply before it writes).
//
// A file above opts.Limits.MaxFileSize is refused whole (one file-level
// *ParseError, nothing decoded); a document above MaxDocumentSize or
// nested deeper than MaxDepth is a *ParseError for that document, and the
// others are still returned. Limit errors wrap a *LimitError (and so
// ErrLimit).
func Parse(file string, data []byte, opts ParseOptions) ([]Manifest, error) {
	limits := opts.Limits.withDefaults()
	if int64(len(data)) > limits.MaxFileSize {
		return nil, &ParseError{File: file, Doc: -1, Err: &LimitError{What: "file size", Size: int64(len(data)), Limit: limits.MaxFileSize}}
	}
	docs, err := SplitDocuments(data)
	if err != nil {
		return nil, &ParseError{File: file, Doc: -1, Err: err}
	}
	out := make([]Manifest, 0, len(docs))
	var errs []error
	values := map[string]any{}
	for _, d := range docs {
		if len(d.Data) > limits.MaxDocumentSize {
			errs = append(errs, &ParseError{File: file, Doc: d.Index, Line: d.Line,
				Err: &LimitError{What: "document size", Size: int64(len(d.Data)), Limit: int64(limits.MaxDocumentSize)}})
			continue
		}
		m, err := decodeDocument(d, values)
		if err != nil {
			errs = append(errs, &ParseError{File: file, Doc: d.Index, Line: d.Line, Err: err})
			continue
		}
		if m == nil {
			continue
		}
		if tooDeep(m.Obj.Object, limits.MaxDepth) {
			errs = append(errs, &ParseError{File: file, Doc: d.Index, Line: d.Line,
				Err: &LimitError{What: "depth", Size: int64(limits.MaxDepth) + 1, Limit: int64(limits.MaxDepth)}})
			continue
		}
		if probs := silentProblems(m.Obj.Object); len(probs) > 0 {
			errs = append(errs, &ParseError{File: file, Doc: d.Index, Line: d.Line, Err: objectError(m, probs)})
			continue
		}
		m.File = file
		m.OriginalFilename = baseName(file)
		m.Doc = d.Index
		m.Line = d.Line
		out = append(out, *m)
	}
	return out, errors.Join(errs...)
}

func baseName(file string) string {
	if i := strings.LastIndexByte(file, '/'); i >= 0 {
		return file[i+1:]
	}
	return file
}

// decodeDocument returns nil, nil for empty and null documents. YAML
// documents take the direct path (decodeYAMLFast) when it can vouch for the
// result, else the reference path (decodeSlow), which also words the errors.
// Raw is dropped (see Manifest).
func decodeDocument(d Document, values map[string]any) (*Manifest, error) {
	if !d.JSON {
		if isBlankYAML(d.Data) {
			return nil, nil
		}
		if m, ok := decodeYAMLFast(d.Data, values); ok {
			return m, nil
		}
	}
	m, err := decodeSlow(d)
	if m != nil {
		m.Raw = nil
	}
	return m, err
}

// decodeSlow decodes a document the way library-go's ParseManifests does:
// YAML to JSON with sigs.k8s.io/yaml, then Manifest.UnmarshalJSON (the
// universal decoder).
func decodeSlow(d Document) (*Manifest, error) {
	raw := d.Data
	if !d.JSON {
		if isBlankYAML(raw) {
			return nil, nil
		}
		j, err := yaml.YAMLToJSON(raw)
		if err != nil {
			return nil, errors.New(shiftYAMLLines(err.Error(), d.Line-1))
		}
		raw = j
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	if raw[0] != '{' {
		return nil, fmt.Errorf("document is not an object (starts with %q)", firstToken(raw))
	}
	m := &Manifest{}
	if err := m.Manifest.UnmarshalJSON(raw); err != nil {
		// The decoder's messages quote the whole object; say what is wrong
		// in a few words when it is one of the usual problems: a field
		// of metadata of the wrong type, a missing kind or name.
		var obj map[string]any
		if json.Unmarshal(raw, &obj) == nil {
			if probs := silentProblems(obj); len(probs) > 0 {
				kind, _ := obj["kind"].(string)
				name := ""
				if md, ok := obj["metadata"].(map[string]any); ok {
					name, _ = md["name"].(string)
				}
				return nil, problemsError(kind, name, probs)
			}
		}
		if short := checkRequired(raw); short != nil {
			return nil, short
		}
		return nil, err
	}
	if m.Obj.GetAPIVersion() == "" {
		return nil, errors.New("apiVersion is required (a string)")
	}
	return m, nil
}

// checkRequired reports the common structural problems with a short message
// instead of the decoder's, which quotes the whole object.
func checkRequired(raw []byte) error {
	var head struct {
		APIVersion json.RawMessage `json:"apiVersion"`
		Kind       json.RawMessage `json:"kind"`
		Metadata   json.RawMessage `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return err
	}
	str := func(r json.RawMessage) (string, bool) {
		var s string
		if len(r) == 0 || json.Unmarshal(r, &s) != nil {
			return "", false
		}
		return s, true
	}
	if s, ok := str(head.Kind); !ok || s == "" {
		return errors.New("kind is required (a string)")
	}
	if s, ok := str(head.APIVersion); !ok || s == "" {
		return errors.New("apiVersion is required (a string)")
	} else if _, err := schema.ParseGroupVersion(s); err != nil {
		return fmt.Errorf("apiVersion %q: %w", s, err)
	}
	var meta struct {
		Name json.RawMessage `json:"name"`
	}
	if len(head.Metadata) == 0 || json.Unmarshal(head.Metadata, &meta) != nil {
		return errors.New("metadata is required (an object with a name)")
	}
	if s, ok := str(meta.Name); !ok || s == "" {
		return errors.New("metadata.name is required (a string)")
	}
	return nil
}

func firstToken(b []byte) string {
	if len(b) > 20 {
		b = b[:20]
	}
	return string(b)
}

// shiftYAMLLines rewrites "line N" in a YAML error to a line of the file.
func shiftYAMLLines(msg string, offset int) string {
	if offset == 0 {
		return msg
	}
	return yamlLineRE.ReplaceAllStringFunc(msg, func(s string) string {
		n, err := strconv.Atoi(s[len("line "):])
		if err != nil {
			return s
		}
		return "line " + strconv.Itoa(n+offset)
	})
}

// FromObject builds a Manifest from an object held in memory (a generated
// object), decoded through the same path as parsed ones. file and doc give
// its position.
func FromObject(file string, doc int, obj map[string]any) (*Manifest, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	if err := checkRequired(raw); err != nil {
		return nil, err
	}
	m := &Manifest{File: file, Doc: doc, Line: 0}
	if err := m.Manifest.UnmarshalJSON(raw); err != nil {
		return nil, err
	}
	m.OriginalFilename = baseName(file)
	m.Raw = nil
	return m, nil
}

// objectError says what CheckObject found in m, naming the object.
func objectError(m *Manifest, probs []FieldError) error {
	kind, _ := m.Obj.Object["kind"].(string)
	return problemsError(kind, m.Obj.GetName(), probs)
}

func problemsError(kind, name string, probs []FieldError) error {
	sort.Slice(probs, func(i, j int) bool { return probs[i].Field < probs[j].Field })
	msgs := make([]string, len(probs))
	for i, p := range probs {
		msgs[i] = p.Error()
	}
	return fmt.Errorf("%s/%s: %s", kind, name, strings.Join(msgs, "; "))
}

// silentProblems are the problems of CheckObject that unstructured's
// accessors hide: a namespace, labels or annotations of the wrong type.
func silentProblems(obj map[string]any) []FieldError {
	var out []FieldError
	for _, p := range CheckObject(obj) {
		silent := p.Field == "metadata.namespace" || strings.HasPrefix(p.Field, "metadata.labels") || strings.HasPrefix(p.Field, "metadata.annotations")
		if silent && (strings.HasPrefix(p.Message, "must be a string") || strings.HasPrefix(p.Message, "must be a map of strings")) {
			out = append(out, p)
		}
	}
	return out
}
