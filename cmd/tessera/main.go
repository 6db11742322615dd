// Command tessera trains models and inspects devices.
//
//	tessera train [flags]   train an MNIST classifier on the default device
//	tessera devices         list WebGPU adapters and the GPU memory budget
//
// The device comes from TESSERA_DEVICE (auto, cpu, gpu, gpu:N); auto uses
// a real GPU when one exists and the CPU otherwise, and says which.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "train":
		err = train(os.Args[2:])
	case "devices":
		err = devices()
	case "-h", "-help", "--help", "help":
		usage()
		return
	default:
		fmt.Fprintf(os.Stderr, "tessera: unknown command %q\n", os.Args[1])
		usage()
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tessera:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprint(os.Stderr, `usage:
  tessera train [flags]   train an MNIST classifier on the default device (see -h)
  tessera devices         list WebGPU adapters and the GPU memory budget
`)
}
