package plan

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"hash/fnv"
	"strconv"

	"github.com/payload-apply/payload-apply/lib/jsonenc"
)

// ObjectDigests are hashes of the objects a plan applies, each object as
// encoding/json writes it, in apply order.
type ObjectDigests struct {
	// FNV64 is the 64-bit FNV-1 hash of the objects' JSON, one after the
	// other (objects that do not encode as JSON are left out): what the
	// CVO's status.versionHash hashes of its manifests.
	FNV64 [8]byte
	// Content is the SHA-256 of every object with its file, document,
	// JSON and the Go type of each number in it (int64(1) and 1.0 print
	// the same): two plans with the same Content apply the same objects
	// from the same places. Valid only when ContentOK.
	Content [32]byte
	// ContentOK is false when an object holds a value that does not
	// encode (then Content says nothing).
	ContentOK bool
}

// Digests returns the plan's ObjectDigests, computed once (Objects must
// not change after the plan is built).
func (p *Plan) Digests() ObjectDigests {
	p.digestOnce.Do(func() { p.digests = objectDigests(p) })
	return p.digests
}

func objectDigests(p *Plan) ObjectDigests {
	var d ObjectDigests
	h := fnv.New64()
	content := sha256.New()
	d.ContentOK = true
	e := jsonenc.Encoder{RecordKinds: true}
	var buf, head []byte
	for _, m := range p.Objects {
		e.Reset()
		var err error
		if buf, err = e.Append(buf[:0], m.Obj.Object); err != nil {
			// What jsonenc does not encode, encoding/json may (the
			// number kinds are then unknown: no Content).
			d.ContentOK = false
			if buf, err = json.Marshal(m.Obj.Object); err != nil {
				continue
			}
		}
		h.Write(buf)
		// Each part is prefixed by its length: the parts of one object
		// cannot be read as another's.
		head = strconv.AppendQuote(head[:0], m.File)
		head = binary.AppendVarint(head, int64(m.Doc))
		head = binary.AppendUvarint(head, uint64(len(buf)))
		content.Write(head)
		content.Write(buf)
		head = binary.AppendUvarint(head[:0], uint64(len(e.Kinds)))
		content.Write(head)
		content.Write(e.Kinds)
	}
	h.Sum(d.FNV64[:0])
	content.Sum(d.Content[:0])
	return d
}
