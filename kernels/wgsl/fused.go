package wgsl

import (
	"fmt"
	"strings"
)

// MaxFusedInputs is the most inputs a Fused kernel binds: with its output,
// the 8 storage buffers per stage every WebGPU adapter offers.
const MaxFusedInputs = 7

// MaxFusedNodes is the most ops one Fused kernel computes.
const MaxFusedNodes = 32

// A FusedNode is one op of a fused elementwise expression: Expr, an op's
// expression from the op table in x, y, z (its Args in order) and p0, p1
// (its scalars, of the kernel's scalar type), giving a value of type Out
// (f32, i32 or bool). An Arg below 0 is the kernel's input -Arg-1; one of
// 0 or more is the result of that earlier node. Scalar is the type of
// p0 and p1 (f32 or i32), "" meaning the kernel's scalar type.
type FusedNode struct {
	Expr   string
	Args   []int
	Out    string
	P0, P1 float64
	Scalar string
}

// scalarOf is the type of n's scalars in a kernel whose scalar type is
// def.
func (n FusedNode) scalarOf(def string) string {
	if n.Scalar != "" {
		return n.Scalar
	}
	return def
}

// fusedScalars packs the nodes' scalars, two per node, into the sc
// params array.
func fusedScalars(nodes []FusedNode, def string) []uint32 {
	sc := make([]uint32, 4*vec4s(2*len(nodes)))
	for k, n := range nodes {
		st := n.scalarOf(def)
		sc[2*k], sc[2*k+1] = scalarBits(n.P0, st), scalarBits(n.P1, st)
	}
	return sc
}

// Fused returns the kernel computing out = the last node of nodes over
// Out's shape: one dispatch for a whole elementwise expression, rendered
// from the elementwise template (the modes, bindings and layouts of
// Elementwise, with up to MaxFusedInputs inputs). Intermediate values
// live in registers. The nodes' scalars travel in the params, so one
// source serves every value of them; a.P0, a.P1 are unused. Every node
// reads its scalars as a.ScalarType ("" means f32), which therefore also
// picks pow_'s variant.
func Fused(nodes []FusedNode, inTypes []string, outType string, a ElementwiseArgs) (Kernel, error) {
	if len(a.In) > MaxFusedInputs {
		return Kernel{}, fmt.Errorf("wgsl: Fused: %d inputs (at most %d)", len(a.In), MaxFusedInputs)
	}
	if a.ScalarType == "" {
		a.ScalarType = F32
	}
	fns, err := fusedFns(nodes, inTypes, outType, a.ScalarType)
	if err != nil {
		return Kernel{}, err
	}
	pl, err := planElementwise("", inTypes, outType, a)
	if err != nil {
		return Kernel{}, err
	}
	pl.Fns, pl.NSc = fns, 2*len(nodes)
	sc := fusedScalars(nodes, a.ScalarType)
	return pl.kernel(a, func(p *Params) { p.SetArray("sc", sc) })
}

// fusedFns writes op_ for nodes: one function per node, its op's
// expression, and op_ calling them in order.
func fusedFns(nodes []FusedNode, inTypes []string, outType, scalar string) (string, error) {
	if len(nodes) == 0 || len(nodes) > MaxFusedNodes {
		return "", fmt.Errorf("wgsl: Fused: %d nodes (1 to %d)", len(nodes), MaxFusedNodes)
	}
	if last := nodes[len(nodes)-1].Out; last != outType {
		return "", fmt.Errorf("wgsl: Fused: the last node gives %s, the output is %s", last, outType)
	}
	var b, body strings.Builder
	typeOf := func(arg, k int) (string, string, error) {
		switch {
		case arg < 0 && -arg-1 < len(inTypes):
			return inTypes[-arg-1], ewNames[-arg-1], nil
		case arg >= 0 && arg < k:
			return nodes[arg].Out, fmt.Sprintf("t%d", arg), nil
		}
		return "", "", fmt.Errorf("wgsl: Fused: node %d reads operand %d, which is no input or earlier node", k, arg)
	}
	for k, n := range nodes {
		if len(n.Args) > 3 {
			return "", fmt.Errorf("wgsl: Fused: node %d has %d arguments (at most 3)", k, len(n.Args))
		}
		if _, err := storageType(n.Out); err != nil {
			return "", err
		}
		params := make([]string, 0, len(n.Args)+2)
		args := make([]string, 0, len(n.Args)+2)
		for i, arg := range n.Args {
			t, name, err := typeOf(arg, k)
			if err != nil {
				return "", err
			}
			params = append(params, fmt.Sprintf("%s: %s", ewNames[i], t))
			args = append(args, name)
		}
		st := n.scalarOf(scalar)
		if st != F32 && st != I32 {
			return "", fmt.Errorf("wgsl: Fused: node %d has scalar type %q", k, st)
		}
		params = append(params, "p0: "+st, "p1: "+st)
		args = append(args, fmt.Sprintf("bitcast<%s>(%s)", st, ax("sc", 2*k)), fmt.Sprintf("bitcast<%s>(%s)", st, ax("sc", 2*k+1)))
		fmt.Fprintf(&b, "fn f%d_(%s) -> %s {\n\treturn %s;\n}\n\n", k, strings.Join(params, ", "), n.Out, n.Expr)
		fmt.Fprintf(&body, "\tlet t%d = f%d_(%s);\n", k, k, strings.Join(args, ", "))
	}
	fn := make([]string, len(inTypes))
	for k, t := range inTypes {
		fn[k] = ewNames[k] + ": " + t
	}
	fmt.Fprintf(&b, "fn op_(%s) -> %s {\n%s\treturn t%d;\n}", strings.Join(fn, ", "), outType, body.String(), len(nodes)-1)
	return b.String(), nil
}

// InputName is the binding name of an Elementwise or Fused kernel's
// input k.
func InputName(k int) string { return ewNames[k] }
