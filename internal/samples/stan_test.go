package samples

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/internal/cli"
)

// chainText is a small CmdStan chain: comments, the header, two saved
// warmup draws, the adaptation comments, four draws, the timing comments.
const chainText = `# stan_version_major = 2
# save_warmup = true
lp__,accept_stat__,theta.1,theta.2,mu
-1,0.9,100,100,100
-1,0.9,100,100,100
# Adaptation terminated
# Step size = 0.9
-1,0.9,1,2,3
-1,0.9,4,5,6
-1,0.9,7,8,9
-1,0.9,10,11,12
#  Elapsed Time: 0.01 seconds (Total)
`

// The releases of a chain are the chosen draws after warmup, counted from
// the start or the end, increasing, each the chosen columns.
func TestReadStanChainDraws(t *testing.T) {
	for _, c := range []struct {
		spec StanSpec
		row  []float64
		cols []string
	}{
		{StanSpec{}, []float64{10, 11, 12}, []string{"theta.1", "theta.2", "mu"}},
		{StanSpec{Draws: []int{-1, 1}}, []float64{1, 2, 3, 10, 11, 12}, []string{"theta.1", "theta.2", "mu"}},
		{StanSpec{Draws: []int{-3, 3}, Params: []string{"mu", "theta"}}, []float64{6, 4, 5, 9, 7, 8}, []string{"mu", "theta.1", "theta.2"}},
		{StanSpec{Draws: []int{-4}, SamplerColumns: true}, []float64{-1, 0.9, 1, 2, 3}, []string{"lp__", "accept_stat__", "theta.1", "theta.2", "mu"}},
	} {
		r := &stanReader{ctx: context.Background(), spec: c.spec}
		if len(r.spec.Draws) == 0 {
			r.spec.Draws = []int{-1}
		}
		for _, k := range r.spec.Draws {
			r.tail = max(r.tail, -k)
		}
		st, err := r.scan(strings.NewReader(chainText))
		if err != nil {
			t.Fatal(err)
		}
		row, err := r.finish("c.csv", st)
		if err != nil || !reflect.DeepEqual(row, c.row) || !reflect.DeepEqual(r.layout.Columns, c.cols) || r.layout.Of != 4 {
			t.Errorf("%+v: row %v cols %v of %d (%v); want %v %v", c.spec, row, r.layout.Columns, r.layout.Of, err, c.row, c.cols)
		}
	}
}

// A CmdStan file read as a file of runs is refused, naming the file.
func TestReadFileRefusesStan(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{"c.csv": chainText, "h.csv": "lp__,theta\n1,2\n"} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(text), 0o644)
		_, err := ReadFiles(context.Background(), [2]string{p, p})
		var u cli.UsageError
		if !errors.As(err, &u) || !strings.HasPrefix(u.Msg, p+": CmdStan output") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// FuzzReadStanChain feeds arbitrary text to the chain reader: it never
// panics, and a chain it accepts gives the chosen draws' chosen columns,
// all finite, and as many draws as its header names columns for.
func FuzzReadStanChain(f *testing.F) {
	f.Add(chainText)
	f.Add("lp__,x\n1,2\n# Adaptation terminated\n")
	f.Add("# a\nx.1,x.2\n1,nan\n")
	f.Add("x,y\n1\n")
	f.Fuzz(func(t *testing.T, text string) {
		r := &stanReader{ctx: context.Background(), spec: StanSpec{Draws: []int{2, -1}}, tail: 1}
		st, err := r.scan(strings.NewReader(text))
		if err != nil {
			return
		}
		row, err := r.finish("c.csv", st)
		if err != nil {
			return
		}
		if len(row) != 2*len(r.sel) || len(r.sel) == 0 || r.layout.Of < 2 {
			t.Fatalf("row of %d values for %d columns, %d draws", len(row), len(r.sel), r.layout.Of)
		}
		for _, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("accepted %v", v)
			}
		}
	})
}
