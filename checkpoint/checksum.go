package checkpoint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"slices"
	"strconv"
	"strings"
)

// MetaChecksum is the metadata key of the checksum Save writes into
// every file and Load checks. Save refuses it in the metadata it is
// given, and Load leaves it out of File.Meta.
//
// Its value is "crc32c:" and eight hex digits, a colon, then eight hex
// digits per tensor in the order of their names: the CRC-32C
// (Castagnoli) of the header's content, then of each tensor's bytes as
// stored. The header's content is the JSON
//
//	{"meta":{...},"tensors":[{"crc32c":"1a2b3c4d","dtype":"F32","name":"a","shape":[2]},...]}
//
// with the metadata but this key, the tensors sorted by name, and keys
// sorted, as Go's encoding/json writes it without HTML escapes. It
// covers what the tensors and the metadata are, not where the bytes lie,
// so that a program that rewrites the file without changing them (as
// tools/safetensors/reader.py does) keeps it valid.
const MetaChecksum = "tessera.checksum"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// A checksum is the value of MetaChecksum: the CRC-32C of the header's
// content and of each tensor's data, in name order.
type checksum struct {
	header  uint32
	tensors []uint32
}

const checksumPrefix = "crc32c:"

// String formats c as MetaChecksum's value.
func (c checksum) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s%08x:", checksumPrefix, c.header)
	for _, s := range c.tensors {
		fmt.Fprintf(&b, "%08x", s)
	}
	return b.String()
}

// parseChecksum parses MetaChecksum's value s for a file of n tensors.
func parseChecksum(s string, n int) (checksum, error) {
	bad := func(why string) (checksum, error) {
		return checksum{}, &FileError{Detail: fmt.Sprintf("damaged checksum: the metadata %q is %.40q, %s", MetaChecksum, s, why), Err: ErrChecksum}
	}
	rest, ok := strings.CutPrefix(s, checksumPrefix)
	if !ok || len(rest) < 9 || rest[8] != ':' {
		return bad(`not "crc32c:", eight hex digits and a colon`)
	}
	hexes := rest[9:]
	if len(hexes) != 8*n {
		return bad(fmt.Sprintf("with %d hex digits for the tensors, not 8 for each of the %d", len(hexes), n))
	}
	c := checksum{tensors: make([]uint32, n)}
	var err error
	if c.header, err = parseHex(rest[:8]); err != nil {
		return bad("not hex digits")
	}
	for i := range c.tensors {
		if c.tensors[i], err = parseHex(hexes[8*i : 8*i+8]); err != nil {
			return bad("not hex digits")
		}
	}
	return c, nil
}

func parseHex(s string) (uint32, error) {
	v, err := strconv.ParseUint(s, 16, 32)
	return uint32(v), err
}

// A summed is what the header's checksum says of one tensor.
type summed struct {
	Sum   uint32 `json:"-"`      // the CRC-32C of its data
	CRC   string `json:"crc32c"` // Sum in hex, filled in by headerSum
	DType string `json:"dtype"`  // as stored: "F32", "BOOL", ...
	Name  string `json:"name"`
	Shape []int  `json:"shape"`
}

// headerSum returns the CRC-32C of the header's content (see
// MetaChecksum): meta, without MetaChecksum, and the tensors, which it
// sorts by name and whose CRC it fills in.
func headerSum(meta map[string]string, tensors []summed) uint32 {
	m := make(map[string]string, len(meta))
	for k, v := range meta {
		if k != MetaChecksum {
			m[k] = v
		}
	}
	slices.SortFunc(tensors, func(a, b summed) int { return strings.Compare(a.Name, b.Name) })
	for i := range tensors {
		tensors[i].CRC = fmt.Sprintf("%08x", tensors[i].Sum)
		if tensors[i].Shape == nil {
			tensors[i].Shape = []int{}
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(struct { // strings, ints: cannot fail
		Meta    map[string]string `json:"meta"`
		Tensors []summed          `json:"tensors"`
	}{m, tensors})
	return crc32.Checksum(bytes.TrimSuffix(b.Bytes(), []byte("\n")), castagnoli)
}

// checksumErr returns an ErrChecksum error: what was checked, the
// CRC-32C its bytes give and the one the file records.
func checksumErr(what string, got, want uint32) *FileError {
	return &FileError{Detail: fmt.Sprintf("checksum mismatch: %s give CRC-32C %08x, the file records %08x "+
		"(the file is damaged, or a program other than Tessera changed it and kept the metadata %q)", what, got, want, MetaChecksum),
		Err: ErrChecksum}
}
