package checkpoint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"unicode/utf8"
)

// maxHeader is the largest JSON header read, the limit of the reference
// implementation (huggingface/safetensors).
const maxHeader = 100_000_000

// metaKey is the header key of the free-form string map.
const metaKey = "__metadata__"

// An entry is one tensor of a file's header: its name, dtype, shape and
// byte range [begin, end) in the data that follow the header.
type entry struct {
	name       string
	dtype      fileDType
	shape      []int
	numel      int
	begin, end int64
}

// A header is a parsed and validated safetensors header: the entries in
// data order and the metadata.
type header struct {
	entries []entry
	meta    map[string]string
}

// parseHeader parses the JSON header h of a file whose data section
// holds dataLen bytes, and checks it against the specification and the
// data: every dtype known, every shape's byte size equal to its
// data_offsets' range, the ranges tiling the data exactly (no overlap,
// no gap, nothing past the end, nothing after the last tensor), and no
// name or key given twice. The errors are ErrFormat *FileErrors.
func parseHeader(h []byte, dataLen int64) (*header, error) {
	if !utf8.Valid(h) {
		return nil, formatErr("the header is not valid UTF-8")
	}
	p := &parser{dec: json.NewDecoder(bytes.NewReader(h))}
	p.dec.UseNumber()
	hd := &header{}
	if err := p.object("the header", func(key string) error {
		if key == metaKey {
			m, err := p.meta()
			hd.meta = m
			return err
		}
		e, err := p.entry(key)
		hd.entries = append(hd.entries, e)
		return err
	}); err != nil {
		return nil, err
	}
	if rest := h[p.dec.InputOffset():]; len(bytes.TrimRight(rest, " \t\r\n")) > 0 {
		return nil, formatErr("the header has %d bytes after its JSON object", len(rest))
	}
	return hd, hd.check(len(h), dataLen)
}

// check validates sizes and offsets and sorts the entries by offset;
// hsize is the length of the header.
func (hd *header) check(hsize int, dataLen int64) error {
	var last *entry // the entry that ends last
	for i := range hd.entries {
		e := &hd.entries[i]
		if e.end < e.begin {
			return formatErr("tensor %q: data_offsets [%d, %d] end before they begin", e.name, e.begin, e.end)
		}
		n, ok := 1, true
		for _, d := range e.shape {
			hi, lo := bits.Mul64(uint64(n), uint64(d))
			n, ok = int(lo), ok && hi == 0 && lo <= math.MaxInt
		}
		hi, lo := bits.Mul64(uint64(n), uint64(e.dtype.size))
		if !ok || hi != 0 || lo > math.MaxInt64 {
			return formatErr("tensor %q: shape %v of %s overflows", e.name, e.shape, e.dtype.name)
		}
		if int64(lo) != e.end-e.begin {
			return formatErr("tensor %q: shape %v of %s needs %d bytes but data_offsets [%d, %d] hold %d",
				e.name, e.shape, e.dtype.name, lo, e.begin, e.end, e.end-e.begin)
		}
		e.numel = n
		if last == nil || e.end > last.end {
			last = e
		}
	}
	if last != nil && last.end > dataLen {
		base := 8 + int64(hsize)
		return truncErr(base+last.end, base+dataLen, "tensor %q: data_offsets [%d, %d] run past the %d bytes of data",
			last.name, last.begin, last.end, dataLen)
	}
	slices.SortFunc(hd.entries, func(a, b entry) int {
		if a.begin != b.begin {
			return cmpInt64(a.begin, b.begin)
		}
		return cmpInt64(a.end, b.end)
	})
	var pos int64
	for i, e := range hd.entries {
		if e.begin < pos {
			p := hd.entries[i-1]
			return formatErr("tensor %q (bytes %d to %d) overlaps tensor %q (bytes %d to %d)",
				e.name, e.begin, e.end, p.name, p.begin, p.end)
		}
		if e.begin > pos {
			return formatErr("bytes %d to %d of the data belong to no tensor (before tensor %q)", pos, e.begin, e.name)
		}
		pos = e.end
	}
	if pos != dataLen {
		return formatErr("%d bytes of trailing data after the last tensor (the tensors end at %d of %d)",
			dataLen-pos, pos, dataLen)
	}
	return nil
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// A parser reads a header's JSON with the token API, so that it sees
// keys given twice, which encoding/json's maps silently merge.
type parser struct{ dec *json.Decoder }

// token returns the next token; what names the value being read.
func (p *parser) token(what string) (json.Token, error) {
	t, err := p.dec.Token()
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return nil, formatErr("invalid JSON in %s: it ends early", what)
	}
	if err != nil {
		return nil, formatErr("invalid JSON in %s: %v", what, err)
	}
	return t, nil
}

// object reads a JSON object whose values field reads, failing on a key
// seen twice.
func (p *parser) object(what string, field func(key string) error) error {
	t, err := p.token(what)
	if err != nil {
		return err
	}
	return p.objectFrom(t, what, field)
}

// objectFrom is object when its first token t was read already.
func (p *parser) objectFrom(t json.Token, what string, field func(key string) error) error {
	if t != json.Delim('{') {
		return formatErr("%s is %s, not a JSON object", what, describe(t))
	}
	seen := map[string]bool{}
	for p.dec.More() {
		t, err := p.token(what)
		if err != nil {
			return err
		}
		key := t.(string) // object keys are strings, or Token fails
		if seen[key] {
			return formatErr("%s gives %q twice", what, key)
		}
		seen[key] = true
		if err := field(key); err != nil {
			return err
		}
	}
	_, err := p.token(what) // the closing brace
	return err
}

// meta reads the __metadata__ map: strings to strings, or null.
func (p *parser) meta() (map[string]string, error) {
	const what = `"__metadata__"`
	t, err := p.token(what)
	if err != nil || t == nil {
		return nil, err
	}
	m := map[string]string{}
	return m, p.objectFrom(t, what, func(key string) error {
		t, err := p.token(what)
		if err != nil {
			return err
		}
		s, ok := t.(string)
		if !ok {
			return formatErr("%s: the value of %q is %s, not a string", what, key, describe(t))
		}
		m[key] = s
		return nil
	})
}

// entry reads a tensor's {"dtype", "shape", "data_offsets"} object.
func (p *parser) entry(name string) (entry, error) {
	e := entry{name: name}
	what := fmt.Sprintf("tensor %q", name)
	var dtype, shape, offsets bool
	err := p.object(what, func(key string) error {
		switch key {
		case "dtype":
			t, err := p.token(what)
			if err != nil {
				return err
			}
			s, ok := t.(string)
			if !ok {
				return formatErr("%s: dtype is %s, not a string", what, describe(t))
			}
			if e.dtype, ok = fileDTypes[s]; !ok {
				return formatErr("%s: unknown dtype %q", what, s)
			}
			dtype = true
		case "shape":
			dims, err := p.ints(what, "shape")
			for _, d := range dims {
				e.shape = append(e.shape, int(d))
			}
			shape = true
			return err
		case "data_offsets":
			o, err := p.ints(what, "data_offsets")
			if err == nil && len(o) != 2 {
				err = formatErr("%s: data_offsets has %d numbers, not 2", what, len(o))
			}
			if err == nil {
				e.begin, e.end = o[0], o[1]
			}
			offsets = true
			return err
		default:
			return formatErr("%s: unknown field %q", what, key)
		}
		return nil
	})
	if err == nil && !(dtype && shape && offsets) {
		err = formatErr("%s lacks dtype, shape or data_offsets", what)
	}
	return e, err
}

// ints reads an array of non-negative integers that fit in an int.
func (p *parser) ints(what, field string) ([]int64, error) {
	t, err := p.token(what)
	if err != nil {
		return nil, err
	}
	if t != json.Delim('[') {
		return nil, formatErr("%s: %s is %s, not an array", what, field, describe(t))
	}
	var out []int64
	for p.dec.More() {
		t, err := p.token(what)
		if err != nil {
			return nil, err
		}
		n, ok := t.(json.Number)
		if !ok {
			return nil, formatErr("%s: %s holds %s, not a number", what, field, describe(t))
		}
		v, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil || v < 0 || v > math.MaxInt {
			return nil, formatErr("%s: %s holds %s, not a non-negative integer that fits in %d bits", what, field, n, bits.UintSize-1)
		}
		out = append(out, v)
	}
	_, err = p.token(what) // the closing bracket
	return out, err
}

// describe names a JSON token for an error message.
func describe(t json.Token) string {
	switch v := t.(type) {
	case nil:
		return "null"
	case json.Delim:
		if v == '{' {
			return "an object"
		}
		return "an array"
	case string:
		return strconv.Quote(v)
	case json.Number:
		return "the number " + string(v)
	case bool:
		return strconv.FormatBool(v)
	}
	return fmt.Sprint(t)
}
