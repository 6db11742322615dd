package data_test

import (
	"fmt"

	"github.com/tessera-ml/tessera/data"
	"github.com/tessera-ml/tessera/tensor"
)

// A loader of ten examples in shuffled batches of four: each epoch
// visits every example once, in an order drawn from the seed and the
// epoch, and State is where to resume after a checkpoint.
func ExampleLoader() {
	x := tensor.Arange(0, 20, 1).Reshape(10, 2) // example i is [2i, 2i+1]
	y := tensor.Arange(0, 10, 1).Cast(tensor.Int32)
	ds, err := data.FromTensors(x, y)
	if err != nil {
		panic(err)
	}
	l, err := data.NewLoader(ds, data.Config{BatchSize: 4, Shuffle: true, Seed: 1})
	if err != nil {
		panic(err)
	}
	defer l.Close()
	for epoch := range 2 {
		for b := range l.Batches() {
			fmt.Println(epoch, b.Tensors[1].Int32s(), b.Tensors[0].Shape())
		}
	}
	fmt.Printf("%+v\n", l.State())
	// Output:
	// 0 [7 6 1 3] [4 2]
	// 0 [2 4 8 9] [4 2]
	// 0 [0 5] [2 2]
	// 1 [2 5 8 3] [4 2]
	// 1 [4 1 7 6] [4 2]
	// 1 [0 9] [2 2]
	// {Seed:1 Shuffle:true Epoch:2 Position:0 Examples:10}
}
