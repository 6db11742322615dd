// Package ci holds the checks of ci/test.sh that are Go tests rather than
// shell: TestNoDuplicateHelpers (dupcheck_test.go) keeps the layout
// arithmetic in internal/layout and the comparison helpers in
// internal/approx. It has no code of its own.
package ci
