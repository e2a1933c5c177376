package payload

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"reflect"
	"slices"
	"strings"
	"text/template"
	"text/template/parse"
	"time"

	"github.com/payload-apply/payload-apply/lib/manifest"
)

// A template's work is bounded by counting it: text/template has no hook
// for a loop iteration or a template call, so before executing, every
// {{range PIPELINE}} of the parsed trees becomes {{range PIPELINE |
// payloadApplyRangeN}}, whose function returns an iterator over the same
// elements, in the same order, that counts each one; every {{template
// "x" PIPELINE}} gets a counting function at the end of its pipeline; and
// the built-in functions that make strings (print, printf, println, html,
// js, urlquery) and index are replaced by counting versions that refuse to
// build a string above the size limit, and (index) refuse an image
// image-references lacks. Over budget, the counting function panics with
// a template.ExecError, which text/template turns into the error Execute
// returns.

// Names of the functions the rewrite inserts. They are unlikely to clash
// with a payload's own (the CVO gives templates no functions of its own).
const (
	rangeFunc1 = "payloadApplyRange1" // {{range X}}, {{range $v := X}}
	rangeFunc2 = "payloadApplyRange2" // {{range $i, $v := X}}
	callFunc   = "payloadApplyCall"   // {{template "x" X}}
	callFunc0  = "payloadApplyCall0"  // {{template "x"}}
)

// budget counts one file's operations against its limits.
type budget struct {
	ctx      context.Context
	name     string
	limits   TemplateLimits
	maxSize  int64
	deadline time.Time
	ops      int64
}

func newBudget(ctx context.Context, name string, limits TemplateLimits, maxSize int64) *budget {
	return &budget{ctx: ctx, name: name, limits: limits, maxSize: maxSize, deadline: time.Now().Add(limits.MaxTime)}
}

// checkEvery is how many operations pass between looks at the clock and
// the context.
const checkEvery = 1024

// spend counts one operation and stops the execution (a panic text/template
// turns into an error) when the budget is spent, the time is up or ctx
// ended.
func (b *budget) spend() {
	b.ops++
	if b.ops > b.limits.MaxOperations {
		b.stop(&manifest.LimitError{What: "template operations", Size: b.ops, Limit: b.limits.MaxOperations})
	}
	if b.ops%checkEvery != 0 {
		return
	}
	if err := b.ctx.Err(); err != nil {
		b.stop(err)
	}
	if time.Now().After(b.deadline) {
		b.stop(&manifest.LimitError{What: "template time", Size: int64(b.limits.MaxTime) + 1, Limit: int64(b.limits.MaxTime)})
	}
}

func (b *budget) stop(err error) {
	panic(template.ExecError{Name: b.name, Err: err})
}

// checkSize refuses a string of n bytes above the size limit before it is
// built.
func (b *budget) checkSize(n int64) error {
	if n > b.maxSize {
		return &manifest.LimitError{What: "template string size", Size: n, Limit: b.maxSize}
	}
	return nil
}

// parse parses text as the CVO does (template.New(name).Parse), with the
// counting functions, and rewrites every tree to use them.
func (b *budget) parse(text string) (*template.Template, error) {
	t, err := template.New(b.name).Option("missingkey=error").Funcs(b.funcs()).Parse(text)
	if err != nil {
		return nil, err
	}
	for _, tt := range t.Templates() {
		if tt.Tree != nil && tt.Tree.Root != nil {
			rewrite(tt.Tree, tt.Tree.Root)
		}
	}
	return t, nil
}

// execute runs t into w. A panic that is not the budget's (none is
// expected) is an error too, never a crash.
func (b *budget) execute(t *template.Template, w io.Writer, data TemplateData) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("template execution failed: %v", r)
		}
	}()
	err = t.Execute(w, data)
	if err == nil {
		return nil
	}
	if ctxErr := b.ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	// The budget's own errors (and the writer's size limit) say what is
	// wrong without text/template's wrapping.
	var le *manifest.LimitError
	if errors.As(err, &le) {
		return le
	}
	if errors.Is(err, ErrMissingImage) {
		// The error index made, without text/template's wrapping.
		for e := err; e != nil; e = errors.Unwrap(e) {
			if errors.Unwrap(e) == ErrMissingImage {
				return e
			}
		}
	}
	if err == nil {
		return nil
	}
	msg := cleanMessage(err.Error())
	switch {
	case strings.Contains(msg, "map has no entry for key"):
		// The data's one map is .Images: with missingkey=error, a field
		// of it that is not there ({{.Images.x}}, {{with
		// .Images}}{{.x}}) fails so.
		return fmt.Errorf("%w: %s", ErrMissingImage, msg)
	case strings.Contains(msg, "exceeded maximum template depth"):
		return &manifest.LimitError{What: "template call depth", Size: maxCallDepth + 1, Limit: maxCallDepth}
	}
	return errors.New(msg)
}

// maxCallDepth is text/template's own bound on nested template calls.
const maxCallDepth = 100_000

// cleanMessage takes the counting functions out of a template error's
// message, which quotes the rewritten nodes.
func cleanMessage(msg string) string {
	for _, f := range []string{rangeFunc1, rangeFunc2, callFunc0, callFunc} {
		what := "range"
		if f == callFunc || f == callFunc0 {
			what = "template"
		}
		msg = strings.ReplaceAll(msg, "<"+f+">", "<"+what+">")
		msg = strings.ReplaceAll(msg, "error calling "+f+": ", "")
		msg = strings.ReplaceAll(msg, " | "+f, "")
		msg = strings.ReplaceAll(msg, " "+f, "")
	}
	return msg
}

// rewrite inserts the counting functions into the tree rooted at n.
func rewrite(tree *parse.Tree, n parse.Node) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			rewrite(tree, c)
		}
	case *parse.RangeNode:
		name := rangeFunc1
		if len(n.Pipe.Decl) > 1 {
			name = rangeFunc2
		}
		appendCommand(tree, n.Pipe, name)
		rewrite(tree, n.List)
		rewrite(tree, n.ElseList)
	case *parse.IfNode:
		rewrite(tree, n.List)
		rewrite(tree, n.ElseList)
	case *parse.WithNode:
		rewrite(tree, n.List)
		rewrite(tree, n.ElseList)
	case *parse.TemplateNode:
		if n.Pipe == nil {
			n.Pipe = &parse.PipeNode{NodeType: parse.NodePipe, Pos: n.Pos, Line: n.Line}
			appendCommand(tree, n.Pipe, callFunc0)
			return
		}
		appendCommand(tree, n.Pipe, callFunc)
	}
}

// appendCommand adds "| fn" at the end of pipe.
func appendCommand(tree *parse.Tree, pipe *parse.PipeNode, fn string) {
	id := parse.NewIdentifier(fn).SetTree(tree).SetPos(pipe.Pos)
	pipe.Cmds = append(pipe.Cmds, &parse.CommandNode{NodeType: parse.NodeCommand, Pos: pipe.Pos, Args: []parse.Node{id}})
}

// funcs are the counting functions.
func (b *budget) funcs() template.FuncMap {
	return template.FuncMap{
		rangeFunc1: b.range1,
		rangeFunc2: b.range2,
		callFunc:   func(v any) any { b.spend(); return v },
		callFunc0:  func() any { b.spend(); return nil },
		"print":    func(args ...any) (string, error) { return b.format(fmt.Sprint, args) },
		"println":  func(args ...any) (string, error) { return b.format(fmt.Sprintln, args) },
		"printf": func(format string, args ...any) (string, error) {
			b.spend()
			if err := b.checkSize(int64(len(format)) + formatWidths(format, args) + argsSize(args)); err != nil {
				return "", err
			}
			return fmt.Sprintf(format, args...), nil
		},
		// The escapers at most make each byte six ("\u003c").
		"html":     func(args ...any) (string, error) { return b.escape(template.HTMLEscaper, args) },
		"js":       func(args ...any) (string, error) { return b.escape(template.JSEscaper, args) },
		"urlquery": func(args ...any) (string, error) { return b.escape(template.URLQueryEscaper, args) },
		"index":    b.index,
	}
}

func (b *budget) format(f func(...any) string, args []any) (string, error) {
	b.spend()
	if err := b.checkSize(argsSize(args) + int64(len(args))); err != nil {
		return "", err
	}
	return f(args...), nil
}

func (b *budget) escape(f func(...any) string, args []any) (string, error) {
	b.spend()
	if err := b.checkSize(6 * (argsSize(args) + int64(len(args)))); err != nil {
		return "", err
	}
	return f(args...), nil
}

// argsSize estimates the bytes args print as: strings and byte slices their
// length, anything else what it prints as, which is small for the values a
// template can reach (the data's strings and map, numbers).
func argsSize(args []any) int64 {
	var n int64
	for _, a := range args {
		switch v := a.(type) {
		case string:
			n += int64(len(v))
		case []byte:
			n += int64(len(v))
		case Images:
			for k, s := range v {
				n += int64(len(k) + len(s) + 2)
			}
		case map[string]string:
			for k, s := range v {
				n += int64(len(k) + len(s) + 2)
			}
		default:
			n += 32
		}
	}
	return n
}

// formatWidths adds up the widths and precisions a printf format asks for
// ("%0999999999d" asks for a billion bytes), saturating instead of
// overflowing; with a "*" (a width or precision from the arguments) every
// integer argument counts as one.
func formatWidths(format string, args []any) int64 {
	var total int64
	if strings.Contains(format, "*") {
		for _, a := range args {
			v := reflect.ValueOf(a)
			switch {
			case v.CanInt():
				total += min(max(v.Int(), -v.Int(), 0), 1<<40)
			case v.CanUint():
				total += int64(min(v.Uint(), 1<<40))
			}
		}
	}
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		var n int64
		for i++; i < len(format); i++ {
			c := format[i]
			switch {
			case c >= '0' && c <= '9':
				if n < 1<<40 {
					n = n*10 + int64(c-'0')
				}
				continue
			case c == '.' || c == '+' || c == '-' || c == '#' || c == ' ' || c == '[' || c == ']' || c == '*':
				total += n
				n = 0
				continue
			}
			break
		}
		total += n
		if total > 1<<40 {
			return 1 << 40
		}
	}
	return total
}

// index is text/template's index, counted, which refuses a tag the
// payload's Images lack instead of giving "".
func (b *budget) index(item reflect.Value, indexes ...reflect.Value) (reflect.Value, error) {
	b.spend()
	v := indirectValue(item)
	if !v.IsValid() {
		return reflect.Value{}, errors.New("index of untyped nil")
	}
	for _, ix := range indexes {
		ix = indirectValue(ix)
		if imgs, ok := v.Interface().(Images); ok && v.Kind() == reflect.Map {
			tag, ok := ix.Interface().(string)
			if !ok {
				return reflect.Value{}, fmt.Errorf("index of .Images with %v: want a tag name (a string)", ix)
			}
			spec, ok := imgs[tag]
			if !ok {
				return reflect.Value{}, fmt.Errorf("%w: %q (the template names it in {{index .Images %q}})", ErrMissingImage, tag, tag)
			}
			v = reflect.ValueOf(spec)
			continue
		}
		switch v.Kind() {
		case reflect.Array, reflect.Slice, reflect.String:
			i, err := intIndex(ix, v.Len())
			if err != nil {
				return reflect.Value{}, err
			}
			v = v.Index(i)
		case reflect.Map:
			if !ix.IsValid() {
				ix = reflect.Zero(v.Type().Key())
			}
			if !ix.Type().AssignableTo(v.Type().Key()) {
				if !ix.Type().ConvertibleTo(v.Type().Key()) {
					return reflect.Value{}, fmt.Errorf("value has type %s; should be %s", ix.Type(), v.Type().Key())
				}
				ix = ix.Convert(v.Type().Key())
			}
			if x := v.MapIndex(ix); x.IsValid() {
				v = x
			} else {
				v = reflect.Zero(v.Type().Elem())
			}
		case reflect.Invalid:
			return reflect.Value{}, errors.New("index of untyped nil")
		default:
			return reflect.Value{}, fmt.Errorf("can't index item of type %s", v.Type())
		}
		v = indirectValue(v)
	}
	return v, nil
}

func intIndex(ix reflect.Value, n int) (int, error) {
	var i int64
	switch ix.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i = ix.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if ix.Uint() > uint64(n) {
			return 0, fmt.Errorf("index out of range: %d", ix.Uint())
		}
		i = int64(ix.Uint())
	case reflect.Invalid:
		return 0, errors.New("cannot index slice/array with nil")
	default:
		return 0, fmt.Errorf("cannot index slice/array with type %s", ix.Type())
	}
	if i < 0 || i >= int64(n) {
		return 0, fmt.Errorf("index out of range: %d", i)
	}
	return int(i), nil
}

// indirectValue dereferences pointers and interfaces.
func indirectValue(v reflect.Value) reflect.Value {
	for v.IsValid() && (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) {
		if v.IsNil() {
			return reflect.Value{}
		}
		v = v.Elem()
	}
	return v
}

// range1 is what {{range X}} and {{range $v := X}} iterate: X's elements
// (a map's values in key order, 0..n-1 for an integer), one operation
// each.
func (b *budget) range1(x reflect.Value) (iter.Seq[any], error) {
	b.spend()
	v := indirectValue(x)
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		n := int64(0)
		if v.CanInt() {
			n = v.Int()
		} else if v.Uint() > uint64(1<<62) {
			n = 1 << 62
		} else {
			n = int64(v.Uint())
		}
		return func(yield func(any) bool) {
			for i := int64(0); i < n; i++ {
				b.spend()
				if !yield(reflect.ValueOf(i).Convert(v.Type()).Interface()) {
					return
				}
			}
		}, nil
	case reflect.Func:
		if v.Type().CanSeq() {
			return func(yield func(any) bool) {
				for e := range v.Seq() {
					b.spend()
					if !yield(valueOf(e)) {
						return
					}
				}
			}, nil
		}
		if v.Type().CanSeq2() {
			return func(yield func(any) bool) {
				for k := range v.Seq2() {
					b.spend()
					if !yield(valueOf(k)) {
						return
					}
				}
			}, nil
		}
	}
	seq2, err := b.pairs(v)
	if err != nil {
		return nil, err
	}
	return func(yield func(any) bool) {
		for _, e := range seq2 {
			if !yield(e) {
				return
			}
		}
	}, nil
}

// range2 is what {{range $i, $v := X}} iterates: index (or key) and
// element pairs.
func (b *budget) range2(x reflect.Value) (iter.Seq2[any, any], error) {
	b.spend()
	v := indirectValue(x)
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return nil, fmt.Errorf("can't use %v to iterate over more than one variable", v)
	case reflect.Func:
		if v.Type().CanSeq2() {
			return func(yield func(any, any) bool) {
				for k, e := range v.Seq2() {
					b.spend()
					if !yield(valueOf(k), valueOf(e)) {
						return
					}
				}
			}, nil
		}
		if v.Type().CanSeq() {
			return nil, fmt.Errorf("can't use %v iterate over more than one variable", v)
		}
	}
	return b.pairs(v)
}

// pairs iterates a slice, array, map or channel as range does, counting
// each element; nil and the empty ones yield nothing (so {{else}} runs).
func (b *budget) pairs(v reflect.Value) (iter.Seq2[any, any], error) {
	switch v.Kind() {
	case reflect.Invalid:
		return func(func(any, any) bool) {}, nil
	case reflect.Array, reflect.Slice:
		return func(yield func(any, any) bool) {
			for i := 0; i < v.Len(); i++ {
				b.spend()
				if !yield(i, valueOf(v.Index(i))) {
					return
				}
			}
		}, nil
	case reflect.Map:
		keys := v.MapKeys()
		var sortErr error
		slices.SortFunc(keys, func(a, c reflect.Value) int {
			r, err := compareKeys(a, c)
			if err != nil {
				sortErr = err
			}
			return r
		})
		if sortErr != nil {
			return nil, sortErr
		}
		return func(yield func(any, any) bool) {
			for _, k := range keys {
				b.spend()
				if !yield(valueOf(k), valueOf(v.MapIndex(k))) {
					return
				}
			}
		}, nil
	case reflect.Chan:
		if v.IsNil() {
			return func(func(any, any) bool) {}, nil
		}
		if v.Type().ChanDir() == reflect.SendDir {
			return nil, fmt.Errorf("range over send-only channel %v", v)
		}
		return func(yield func(any, any) bool) {
			for i := 0; ; i++ {
				e, ok := v.Recv()
				if !ok {
					return
				}
				b.spend()
				if !yield(i, valueOf(e)) {
					return
				}
			}
		}, nil
	}
	return nil, fmt.Errorf("range can't iterate over %v", v)
}

// compareKeys orders map keys as text/template does for the kinds of keys
// a template can reach: numbers, strings and booleans.
func compareKeys(a, c reflect.Value) (int, error) {
	a, c = indirectValue(a), indirectValue(c)
	switch {
	case a.Kind() != c.Kind():
		return 0, fmt.Errorf("range over a map with keys of kinds %s and %s", a.Kind(), c.Kind())
	case a.CanInt():
		return cmp.Compare(a.Int(), c.Int()), nil
	case a.CanUint():
		return cmp.Compare(a.Uint(), c.Uint()), nil
	case a.CanFloat():
		return cmp.Compare(a.Float(), c.Float()), nil
	case a.Kind() == reflect.String:
		return strings.Compare(a.String(), c.String()), nil
	case a.Kind() == reflect.Bool:
		switch {
		case a.Bool() == c.Bool():
			return 0, nil
		case !a.Bool():
			return -1, nil
		}
		return 1, nil
	}
	return 0, fmt.Errorf("range over a map with keys of type %s", a.Type())
}

// valueOf is v's value for the template (nil for an invalid value).
func valueOf(v reflect.Value) any {
	if !v.IsValid() || !v.CanInterface() {
		return nil
	}
	return v.Interface()
}

// templateNesting returns how deeply the control structures of a template
// nest (each {{else if}} or {{else with}} counting as one more level until
// its {{end}}, as the parser recurses), or a number above max as soon as
// it knows. It scans actions as the template lexer does: "{{" starts one
// (with an optional "- " trim marker), comments are skipped, and the
// action ends at the "}}" outside quotes.
func templateNesting(src []byte, max int) int {
	var stack []int // per open structure: the else-ifs chained in it
	depth, deepest := 0, 0
	s := string(src)
	for {
		i := strings.Index(s, "{{")
		if i < 0 {
			return deepest
		}
		s = s[i+2:]
		if strings.HasPrefix(s, "- ") || strings.HasPrefix(s, "-\t") || strings.HasPrefix(s, "-\n") || strings.HasPrefix(s, "-\r") {
			s = s[1:]
		}
		s = strings.TrimLeft(s, " \t\r\n")
		if strings.HasPrefix(s, "/*") {
			end := strings.Index(s, "*/")
			if end < 0 {
				return deepest
			}
			s = s[end+2:]
			continue
		}
		word, rest := leadingWord(s)
		switch word {
		case "if", "range", "with", "define", "block":
			stack = append(stack, 0)
			depth++
		case "else":
			next, _ := leadingWord(strings.TrimLeft(rest, " \t\r\n"))
			if (next == "if" || next == "with") && len(stack) > 0 {
				stack[len(stack)-1]++
				depth++
			}
		case "end":
			if len(stack) > 0 {
				depth -= 1 + stack[len(stack)-1]
				stack = stack[:len(stack)-1]
			}
		}
		if depth > deepest {
			deepest = depth
			if deepest > max {
				return deepest
			}
		}
		s = skipAction(rest)
	}
}

func leadingWord(s string) (word, rest string) {
	n := 0
	for n < len(s) && (s[n] == '_' || s[n] >= 'a' && s[n] <= 'z' || s[n] >= 'A' && s[n] <= 'Z' || s[n] >= '0' && s[n] <= '9') {
		n++
	}
	return s[:n], s[n:]
}

// skipAction returns what follows the "}}" that ends the action s is in,
// skipping quoted strings, raw strings and character constants.
func skipAction(s string) string {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"', '\'':
			q := s[i]
			for i++; i < len(s) && s[i] != q && s[i] != '\n'; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		case '`':
			end := strings.IndexByte(s[i+1:], '`')
			if end < 0 {
				return ""
			}
			i += end + 1
		case '}':
			if strings.HasPrefix(s[i:], "}}") {
				return s[i+2:]
			}
		}
	}
	return ""
}
