//go:build !cgo || !unix

package distributed

import "testing"

// unloadable returns what the error of a build without cgo must say.
func unloadable(*testing.T) []string { return []string{"CGO_ENABLED=0"} }
