package tensor

import (
	"math"
	"strconv"
	"strings"
)

// PyTorch's default print options (torch.set_printoptions): 4 digits
// after the point, summaries past 1000 elements showing 3 items at each
// end of every long dimension, lines of at most 80 characters.
const (
	printPrecision = 4
	printThreshold = 1000
	printEdgeItems = 3
	printLineWidth = 80
)

// formatTensor renders t as PyTorch's repr renders a tensor: the same
// number formats (integral, fixed or scientific, chosen over all the
// printed values), the same alignment and line breaks, summaries past
// printThreshold elements, and suffixes for what differs from the
// defaults (device, dtype other than Float32 and Bool, grad).
func formatTensor(t *Tensor) string {
	const prefix = "tensor("
	indent := len(prefix)
	var suffixes []string
	if dev := t.Device(); dev != CPU {
		suffixes = append(suffixes, "device='"+dev.String()+"'")
	}
	var body string
	if t.Numel() == 0 {
		if t.Dim() != 1 {
			suffixes = append(suffixes, "size="+pythonTuple(t.shape))
		}
		if t.dtype != Float32 {
			suffixes = append(suffixes, "dtype="+t.dtype.String())
		}
		body = "[]"
	} else {
		if t.dtype != Float32 && t.dtype != Bool {
			suffixes = append(suffixes, "dtype="+t.dtype.String())
		}
		p, err := newPrinter(t)
		if err != nil {
			return "tensor(<" + err.Error() + ">, shape=" + pythonTuple(t.shape) + ", dtype=" + t.dtype.String() + ", device=" + t.Device().String() + ")"
		}
		var b strings.Builder
		p.write(&b, 0, 0, indent)
		body = b.String()
	}
	switch {
	case t.node != nil && t.requiresGrad:
		suffixes = append(suffixes, "grad_fn=<"+t.node.Op.String()+"Backward>")
	case t.requiresGrad:
		suffixes = append(suffixes, "requires_grad=True")
	}
	return addSuffixes(prefix+body, suffixes, indent)
}

// addSuffixes appends the suffixes, each on a new line when it would
// pass the line width, and the closing parenthesis.
func addSuffixes(s string, suffixes []string, indent int) string {
	var b strings.Builder
	b.WriteString(s)
	last := len(s) - strings.LastIndexByte(s, '\n') + 1 // as PyTorch counts it
	for _, suf := range suffixes {
		if last+len(suf)+2 > printLineWidth {
			b.WriteString(",\n" + strings.Repeat(" ", indent) + suf)
			last = indent + len(suf)
		} else {
			b.WriteString(", " + suf)
			last += len(suf) + 2
		}
	}
	b.WriteByte(')')
	return b.String()
}

// pythonTuple writes a shape as Python writes a tuple: (2, 0), (0,), ().
func pythonTuple(shape []int) string {
	parts := make([]string, len(shape))
	for i, d := range shape {
		parts[i] = strconv.Itoa(d)
	}
	if len(shape) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// A printer holds the values to print: all of them, or, for a summary,
// those within printEdgeItems of either end of every long dimension.
type printer struct {
	shape     []int     // the tensor's shape
	kept      []int     // the shape of vals: shape with long dims cut to 2·printEdgeItems
	vals      []float64 // row-major over kept
	summarize bool
	num       numberFormat
}

// newPrinter reads the values to print. A summary reads only the edge
// items (on the tensor's device, by Narrow and Cat), so printing a huge
// tensor or an expanded view does not read all of it.
func newPrinter(t *Tensor) (*printer, error) {
	p := &printer{shape: t.shape, kept: t.shape, summarize: t.Numel() > printThreshold}
	err := Catch(func() {
		if !p.summarize {
			p.vals = t.Float64s()
			return
		}
		t.Context().NoGrad(func() {
			x := t.Detach()
			for d, n := range t.shape {
				if n > 2*printEdgeItems {
					x = Cat([]*Tensor{x.Narrow(d, 0, printEdgeItems), x.Narrow(d, n-printEdgeItems, printEdgeItems)}, d)
				}
			}
			p.kept = x.shape
			p.vals = x.Float64s()
		})
	})
	if err != nil {
		return nil, err
	}
	p.num = newNumberFormat(t.dtype, p.vals)
	return p, nil
}

// cut reports whether dimension d is summarised.
func (p *printer) cut(d int) bool { return p.summarize && p.shape[d] > 2*printEdgeItems }

// write renders the sub-tensor at dimension d whose first value is
// vals[off], for a line indented by indent (PyTorch's _tensor_str).
func (p *printer) write(b *strings.Builder, d, off, indent int) {
	if d == len(p.shape) {
		b.WriteString(p.num.format(p.vals[off]))
		return
	}
	inner := 1
	for _, n := range p.kept[d+1:] {
		inner *= n
	}
	b.WriteByte('[')
	if d == len(p.shape)-1 {
		items := make([]string, 0, p.kept[d]+1)
		for i := range p.kept[d] {
			if i == printEdgeItems && p.cut(d) {
				items = append(items, " ...")
			}
			items = append(items, p.num.format(p.vals[off+i]))
		}
		perLine := max(1, (printLineWidth-indent)/(p.num.width+2))
		for i := 0; i < len(items); i += perLine {
			if i > 0 {
				b.WriteString(",\n" + strings.Repeat(" ", indent+1))
			}
			b.WriteString(strings.Join(items[i:min(i+perLine, len(items))], ", "))
		}
	} else {
		sep := "," + strings.Repeat("\n", len(p.shape)-d-1) + strings.Repeat(" ", indent+1)
		for i := range p.kept[d] {
			if i > 0 {
				b.WriteString(sep)
			}
			if i == printEdgeItems && p.cut(d) {
				b.WriteString("..." + sep)
			}
			p.write(b, d+1, off+i*inner, indent+1)
		}
	}
	b.WriteByte(']')
}

// A numberFormat is PyTorch's _Formatter: one format and width for all
// the printed values of a tensor.
type numberFormat struct {
	dtype   DType
	intMode bool // floats that are all integral print as "3."
	sciMode bool // floats spanning more than 1000× (or huge, or tiny) print as "1.0000e+05"
	width   int
}

func newNumberFormat(dt DType, vals []float64) numberFormat {
	f := numberFormat{dtype: dt, intMode: true, width: 1}
	if dt == Int32 || dt == Bool {
		for _, v := range vals {
			f.width = max(f.width, len(f.plain(v)))
		}
		return f
	}
	lo, hi := math.Inf(1), 0.0
	var finite []float64
	for _, v := range vals {
		if v != 0 && !math.IsInf(v, 0) && !math.IsNaN(v) {
			finite = append(finite, v)
			lo, hi = min(lo, math.Abs(v)), max(hi, math.Abs(v))
			if v != math.Ceil(v) {
				f.intMode = false
			}
		}
	}
	if len(finite) == 0 {
		return f
	}
	f.sciMode = hi/lo > 1000 || hi > 1e8 || (!f.intMode && lo < 1e-4)
	for _, v := range finite {
		switch {
		case f.sciMode:
			f.width = max(f.width, len(pythonFloat(v, 'e', printPrecision)))
		case f.intMode:
			f.width = max(f.width, len(pythonFloat(v, 'f', 0))+1)
		default:
			f.width = max(f.width, len(pythonFloat(v, 'f', printPrecision)))
		}
	}
	return f
}

// plain formats an integer or bool value as Python's str does.
func (f numberFormat) plain(v float64) string {
	if f.dtype == Bool {
		if v != 0 {
			return "True"
		}
		return "False"
	}
	return strconv.FormatInt(int64(v), 10)
}

// format formats v right-aligned to the common width.
func (f numberFormat) format(v float64) string {
	var s string
	switch {
	case f.dtype == Int32 || f.dtype == Bool:
		s = f.plain(v)
	case f.sciMode:
		s = pythonFloat(v, 'e', printPrecision)
	case f.intMode:
		s = pythonFloat(v, 'f', 0)
		if !math.IsInf(v, 0) && !math.IsNaN(v) {
			s += "."
		}
	default:
		s = pythonFloat(v, 'f', printPrecision)
	}
	if pad := f.width - len(s); pad > 0 {
		s = strings.Repeat(" ", pad) + s
	}
	return s
}

// pythonFloat formats v as Python's "{:.Nf}" or "{:.Ne}" does, which
// differs from strconv only in how it spells NaN and infinities.
func pythonFloat(v float64, verb byte, prec int) string {
	switch {
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	return strconv.FormatFloat(v, verb, prec, 64)
}
