package programs

import (
	"path/filepath"
	"runtime"

	"github.com/tessera-ml/tessera/data"
)

// A symbolCorpus is the text the character programs (charrnn, gpt) train
// on: a file or folder (by default the .go files under $GOROOT/src, as
// Karpathy trained on the Linux sources), split 90/10 into training and
// validation bytes, and the bytes that occur in it as symbols.
type symbolCorpus struct {
	*data.Corpus
	train, val []byte
	vocab      []byte     // the bytes that occur, in increasing order
	index      [256]int32 // the symbol of each byte that occurs
}

// readSymbolCorpus reads path (empty: $GOROOT/src's .go files).
func readSymbolCorpus(path string) (*symbolCorpus, error) {
	pattern := ""
	if path == "" {
		path, pattern = filepath.Join(runtime.GOROOT(), "src"), "*.go"
	}
	corpus, err := data.ReadCorpus(path, pattern)
	if err != nil {
		return nil, err
	}
	c := &symbolCorpus{Corpus: corpus}
	c.train, c.val = corpus.Split(0.9)
	var seen [256]bool
	for _, b := range corpus.Bytes {
		seen[b] = true
	}
	for b := range 256 {
		if seen[b] {
			c.index[b] = int32(len(c.vocab))
			c.vocab = append(c.vocab, byte(b))
		}
	}
	return c, nil
}

// encodeSymbols returns the symbols of text.
func encodeSymbols[T int32 | byte](c *symbolCorpus, text []byte) []T {
	out := make([]T, len(text))
	for i, b := range text {
		out[i] = T(c.index[b])
	}
	return out
}
