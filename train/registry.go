package train

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/tessera-ml/tessera/autograd"
	"github.com/tessera-ml/tessera/data"
	"github.com/tessera-ml/tessera/optim"
	"github.com/tessera-ml/tessera/tensor"
)

var registry = map[string]*Program{}

// Register adds p to the programs `tessera train` offers; a program file
// calls it from init. It panics when the name is taken or p is
// incomplete (a programming error).
func Register(p *Program) {
	if p.Name == "" || p.Summary == "" || p.Setup == nil {
		panic(fmt.Sprintf("train.Register: program %q needs a name, a summary and a Setup", p.Name))
	}
	if _, dup := registry[p.Name]; dup {
		panic(fmt.Sprintf("train.Register: program %q registered twice", p.Name))
	}
	registry[p.Name] = p
}

// Lookup returns the program registered under name, or nil.
func Lookup(name string) *Program { return registry[name] }

// Programs returns the registered programs sorted by name.
func Programs() []*Program {
	var ps []*Program
	for _, p := range registry {
		ps = append(ps, p)
	}
	slices.SortFunc(ps, func(a, b *Program) int { return strings.Compare(a.Name, b.Name) })
	return ps
}

// List writes one line per program: its name and summary.
func List(w io.Writer) {
	for _, p := range Programs() {
		fmt.Fprintf(w, "  %-12s %s\n", p.Name, p.Summary)
	}
}

// NextBatch returns the loader's next batch, starting the next epoch when
// the current one is over.
func NextBatch(l *data.Loader) *data.Batch {
	b, ok := l.Next()
	if !ok {
		b, _ = l.Next()
	}
	return b
}

// SupervisedStep runs one optimizer step on the loader's next batch
// (starting the next epoch when one ends) inside a Scope: loss(batch),
// its backward pass, opt.Step, opt.ZeroGrad, then sched.Step unless sched
// is nil. It returns the loss's value.
func SupervisedStep(l *data.Loader, opt optim.Optimizer, sched optim.Scheduler, loss func(b *data.Batch) *tensor.Tensor) float64 {
	return supervisedStep(tensor.DefaultContext(), l, opt, sched, loss, func(ls *tensor.Tensor) { autograd.Backward(ls) })
}

// supervisedStep is SupervisedStep under a Scope of c, with backward as
// its backward pass.
func supervisedStep(c *tensor.Context, l *data.Loader, opt optim.Optimizer, sched optim.Scheduler, loss func(b *data.Batch) *tensor.Tensor, backward func(*tensor.Tensor)) float64 {
	var v float64
	c.Scope(func() {
		ls := loss(NextBatch(l))
		backward(ls)
		opt.Step()
		opt.ZeroGrad()
		if sched != nil {
			sched.Step()
		}
		v = ls.Item()
	})
	return v
}
