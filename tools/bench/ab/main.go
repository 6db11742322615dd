// Command abcompare compares two builds of Tessera measured by tessera
// bench, run interleaved (see ab.sh): for each workload, size and device
// it prints the median over the rounds of each build and the ratio of
// the new build's time to the old one's (below 1: the new build is
// faster; a rate such as GFLOP/s is inverted into a time).
//
//	abcompare -old o1/bench.json,o2/bench.json -new n1/bench.json,n2/bench.json
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
)

type result struct {
	Workload string `json:"workload"`
	Size     string `json:"size"`
	Impl     string `json:"impl"`
	Device   string `json:"device"`
	Unit     string `json:"unit"`
	Rounds   []struct {
		Value float64 `json:"value"`
	} `json:"rounds"`
}

type key struct{ workload, size, device, unit string }

// load gathers every round's value of every Tessera case in files.
func load(files string) (map[key][]float64, error) {
	out := map[key][]float64{}
	for _, f := range strings.Split(files, ",") {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var doc struct {
			Results []result `json:"results"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			return nil, fmt.Errorf("%s: %v", f, err)
		}
		for _, r := range doc.Results {
			if r.Impl != "tessera" {
				continue
			}
			k := key{r.Workload, r.Size, r.Device, r.Unit}
			for _, v := range r.Rounds {
				out[k] = append(out[k], v.Value)
			}
		}
	}
	return out, nil
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}

// isRate reports whether a unit grows with speed (GFLOP/s, steps/s).
func isRate(unit string) bool { return strings.HasSuffix(unit, "/s") }

func main() {
	oldFiles := flag.String("old", "", "comma-separated bench.json files of the old build")
	newFiles := flag.String("new", "", "comma-separated bench.json files of the new build")
	flag.Parse()
	o, err := load(*oldFiles)
	if err == nil {
		var n map[key][]float64
		if n, err = load(*newFiles); err == nil {
			report(o, n)
			return
		}
	}
	fmt.Fprintln(os.Stderr, "abcompare:", err)
	os.Exit(1)
}

func report(o, n map[key][]float64) {
	var keys []key
	for k := range o {
		if _, ok := n[k]; ok {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		return a.workload+a.device+a.size < b.workload+b.device+b.size
	})
	fmt.Println("| workload | size | device | unit | old (median) | new (median) | new time / old time |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, k := range keys {
		mo, mn := median(o[k]), median(n[k])
		ratio := mn / mo
		if isRate(k.unit) {
			ratio = mo / mn
		}
		fmt.Printf("| %s | %s | %s | %s | %.4g (n=%d) | %.4g (n=%d) | %.3f |\n", k.workload, k.size, k.device, k.unit, mo, len(o[k]), mn, len(n[k]), ratio)
	}
}
