package program

import (
	"bufio"
	"bytes"
	"encoding/json"
	"github.com/mcmcaudit/mcmcaudit/internal/testutil"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// mnistDir is a directory holding the four MNIST idx files, fetched by
// examples/mnist/fetch.sh (from the Go module proxy, hashes checked) unless
// MNIST_DIR names one. Without the network it skips, or fails under
// MCMCAUDIT_REQUIRE_PYTHON=1 (CI, which has the module proxy).
func mnistDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("MNIST_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	out, err := exec.Command("sh", examplePath(t, "mnist", "fetch.sh"), dir).CombinedOutput()
	if err != nil {
		msg := "examples/mnist/fetch.sh: " + err.Error() + " " + strings.TrimSpace(string(out))
		if os.Getenv("MCMCAUDIT_REQUIRE_PYTHON") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return dir
}

// mnistProc is one process of examples/mnist/lenet5_sgld.py, spoken to
// line by line as the tool would under the canary extension of the protocol.
type mnistProc struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr bytes.Buffer
}

func startMNIST(t *testing.T, env []string, args ...string) (*mnistProc, map[string]any) {
	t.Helper()
	p := &mnistProc{cmd: exec.Command(debianPython, append([]string{examplePath(t, "mnist", "lenet5_sgld.py")}, args...)...)}
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stderr = &p.stderr
	var err error
	if p.in, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.out = bufio.NewReader(stdout)
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.in.Close(); p.cmd.Process.Kill(); p.cmd.Wait() })
	var hs map[string]any
	if err := json.Unmarshal(p.line(t), &hs); err != nil {
		t.Fatalf("handshake: %v (stderr %s)", err, p.stderr.String())
	}
	return p, hs
}

func (p *mnistProc) line(t *testing.T) []byte {
	t.Helper()
	b, err := p.out.ReadBytes('\n')
	if err != nil {
		t.Fatalf("reading the program's stdout: %v (stderr: %s)", err, p.stderr.String())
	}
	return b
}

// mnistAnswer is an answer with "scores": true.
type mnistAnswer struct {
	Trial  int         `json:"trial"`
	Scores [][]float64 `json:"scores"`
	Info   struct {
		Correct []int `json:"correct"`
	} `json:"info"`
	Error string `json:"error"`
	raw   []byte
}

func (p *mnistProc) request(t *testing.T, trial int, seed uint64, mask string) mnistAnswer {
	t.Helper()
	req, _ := json.Marshal(map[string]any{"trial": trial, "side": "D", "seed": seed, "canaries": mask})
	if _, err := p.in.Write(append(req, '\n')); err != nil {
		t.Fatal(err)
	}
	raw := p.line(t)
	var a mnistAnswer
	if err := json.Unmarshal(raw, &a); err != nil {
		t.Fatalf("answer %q: %v", raw, err)
	}
	if a.Trial != trial {
		t.Fatalf("answer for trial %d, want %d", a.Trial, trial)
	}
	a.raw = raw
	return a
}

// TestMNISTExampleProtocol runs the MNIST/LeNet5 program of examples/mnist
// on a sliver of MNIST (200 training and 200 test images, 2 epochs, 30
// random canaries) and checks its side of the canary extension of
// mcmcaudit/1: the handshake, one finite log-probability per canary and
// epoch, an error answer (and no crash) for a malformed mask, answers that
// are bit-identical across fresh processes for the same (seed, mask), that
// change with the seed's high bits and with the mask, and a clean refusal
// without MCMCAUDIT_CANARIES.
func TestMNISTExampleProtocol(t *testing.T) {
	testutil.Slow(t) // several PyTorch or NumPy processes: tens of seconds of CPU
	needPython(t, "numpy", "torch")
	dir := mnistDir(t)

	const m, epochs, nTest = 30, 2, 200
	rng := rand.New(rand.NewPCG(21, 5))
	rows := make([][]float64, m)
	for i := range rows {
		rows[i] = make([]float64, 785)
		for j := 0; j < 784; j++ {
			rows[i][j] = rng.Float64()
		}
		rows[i][784] = float64(rng.IntN(10))
	}
	csvPath := filepath.Join(t.TempDir(), "canaries.csv")
	writeCSV(t, csvPath, rows, true)
	mask := make([]byte, m)
	for i := range mask {
		mask[i] = "01"[rng.IntN(2)]
	}
	env := []string{"MNIST_DIR=" + dir, "MCMCAUDIT_CANARIES=" + csvPath, "OMP_NUM_THREADS=1"}
	args := []string{"--train", "200", "--test", "200", "--epochs", "2"}

	p, hs := startMNIST(t, env, args...)
	want := map[string]any{"mcmcaudit": 1.0, "dim": float64(m), "scores": true, "releases": []any{"epoch 1", "epoch 2"}}
	if !reflect.DeepEqual(hs, want) {
		t.Fatalf("handshake %v, want %v", hs, want)
	}
	const seed = uint64(0x9e3779b97f4a7c15)
	a := p.request(t, 0, seed, string(mask))
	if a.Error != "" || len(a.Scores) != epochs || len(a.Info.Correct) != epochs {
		t.Fatalf("answer %s: want %d releases of scores and of info.correct", a.raw, epochs)
	}
	for e, s := range a.Scores {
		if len(s) != m {
			t.Fatalf("epoch %d: %d scores, want %d", e+1, len(s), m)
		}
		for i, v := range s {
			// A log-probability of one of 10 classes: finite and <= 0.
			if math.IsNaN(v) || math.IsInf(v, 0) || v > 0 {
				t.Fatalf("epoch %d, canary %d: score %v is not a log-probability", e+1, i, v)
			}
		}
		if c := a.Info.Correct[e]; c < 0 || c > nTest {
			t.Fatalf("epoch %d: %d test images correct of %d", e+1, c, nTest)
		}
	}

	bad := p.request(t, 1, seed, string(mask[1:]))
	if !strings.Contains(bad.Error, "canaries") || bad.Scores != nil {
		t.Fatalf("a mask of %d characters for %d canaries: answer %s, want an error naming \"canaries\"", m-1, m, bad.raw)
	}
	high := p.request(t, 2, seed^(1<<40), string(mask)) // same process, after the error
	if high.Error != "" || reflect.DeepEqual(high.Scores, a.Scores) {
		t.Fatalf("a seed differing only in bit 40 gave the same scores (or an error %q): the program does not use all 64 bits", high.Error)
	}

	q, _ := startMNIST(t, env, args...)
	again := q.request(t, 0, seed, string(mask))
	if !bytes.Equal(again.raw, a.raw) {
		t.Fatalf("the same (seed, mask) in a fresh process answered differently:\n%s\n%s", a.raw, again.raw)
	}
	none := q.request(t, 1, seed, strings.Repeat("0", m))
	if none.Error != "" || reflect.DeepEqual(none.Scores, a.Scores) {
		t.Fatalf("no canary included gave the same scores as %d included (or an error %q): the mask is not used",
			strings.Count(string(mask), "1"), none.Error)
	}
	q.in.Close()
	if err := q.cmd.Wait(); err != nil {
		t.Fatalf("after stdin closed: %v, want exit status 0 (stderr %s)", err, q.stderr.String())
	}

	cmd := exec.Command(debianPython, append([]string{examplePath(t, "mnist", "lenet5_sgld.py")}, args...)...)
	cmd.Env = append(os.Environ(), "MNIST_DIR="+dir, "MCMCAUDIT_CANARIES=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || stdout.Len() != 0 ||
		!strings.Contains(stderr.String(), "MCMCAUDIT_CANARIES") {
		t.Fatalf("without MCMCAUDIT_CANARIES: %v, stdout %q, stderr %q; want exit 2 naming the variable and no output",
			err, stdout.String(), stderr.String())
	}
}
