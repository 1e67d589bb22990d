package program

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The test binary doubles as the programs under test: with MCMCAUDIT_FAKE
// set it runs fakeProgram in that mode instead of the tests (the re-exec
// pattern), so every fault is produced by a real process.
func TestMain(m *testing.M) {
	if mode := os.Getenv("MCMCAUDIT_FAKE"); mode != "" {
		os.Exit(fakeProgram(mode))
	}
	os.Exit(m.Run())
}

// fakeReleases is the correct answer of the fake program: a deterministic
// function of (seed, side) with values spread over many magnitudes and
// signs, so that the exactness of the JSON round trip is exercised.
func fakeReleases(seed uint64, side string, dim, nrel int) [][]float64 {
	s := uint64(1)
	if side == SideDPrime {
		s = 2
	}
	rng := rand.New(rand.NewPCG(seed, s))
	out := make([][]float64, nrel)
	for i := range out {
		out[i] = make([]float64, dim)
		for k := range out[i] {
			out[i][k] = rng.NormFloat64() * math.Exp(20*rng.NormFloat64())
		}
	}
	return out
}

func envInt(key string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(key)); err == nil {
		return v
	}
	return def
}

// appendReleases writes releases as a JSON array of arrays, with the
// shortest representation that round-trips.
func appendReleases(b []byte, rel [][]float64) []byte {
	b = append(b, '[')
	for i, r := range rel {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		for k, v := range r {
			if k > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendFloat(b, v, 'g', -1, 64)
		}
		b = append(b, ']')
	}
	return append(b, ']')
}

// fakeProgram speaks mcmcaudit/1 and misbehaves as mode says, at trial
// FAKE_AT (−1: never). FAKE_DIM and FAKE_RELEASES size the releases,
// FAKE_MARKER is a file shared by the processes of one test.
func fakeProgram(mode string) int {
	dim, nrel, at := envInt("FAKE_DIM", 3), envInt("FAKE_RELEASES", 2), envInt("FAKE_AT", -1)
	marker := os.Getenv("FAKE_MARKER")
	out := bufio.NewWriter(os.Stdout)
	labels := make([]string, nrel)
	for i := range labels {
		labels[i] = fmt.Sprintf("epoch %d", i+1)
	}
	hs := map[string]any{"mcmcaudit": 1, "dim": dim, "releases": labels}
	switch mode {
	case "bad-version":
		hs["mcmcaudit"] = 2
	case "bad-dim":
		hs["dim"] = 0
	case "no-releases":
		hs["releases"] = []string{}
	case "handshake-not-json":
		fmt.Println("mcmcaudit 1 dim 3")
		return 0
	case "no-handshake":
		time.Sleep(time.Hour)
	case "exit-at-start":
		fmt.Fprintln(os.Stderr, "Traceback (most recent call last):")
		fmt.Fprintln(os.Stderr, "ModuleNotFoundError: No module named 'numpy'")
		return 1
	case "handshake-mismatch":
		if _, err := os.Stat(marker); err == nil {
			hs["dim"] = dim + 1
		} else {
			os.WriteFile(marker, nil, 0o600)
		}
	}
	line, _ := json.Marshal(hs)
	out.Write(append(line, '\n'))
	out.Flush()

	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		var req struct {
			Trial int    `json:"trial"`
			Side  string `json:"side"`
			Seed  uint64 `json:"seed"`
		}
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			fmt.Fprintln(os.Stderr, "fake: bad request:", err)
			return 2
		}
		rel := fakeReleases(req.Seed, req.Side, dim, nrel)
		trial := req.Trial
		raw := "" // a whole answer line replacing the normal one
		if mode == "stderr-flood" {
			w := bufio.NewWriter(os.Stderr)
			for i := 0; i < 2000; i++ {
				fmt.Fprintf(w, "noise line %d of trial %d: %s\n", i, trial, strings.Repeat("x", 100))
			}
			w.Flush()
		}
		if mode == "nondeterministic" {
			rel[0][0] += float64(os.Getpid()) + float64(time.Now().UnixNano()%1000)
		}
		if trial == at {
			switch mode {
			case "crash-once":
				if _, err := os.Stat(marker); err != nil {
					os.WriteFile(marker, nil, 0o600)
					fmt.Fprintf(os.Stderr, "crashing once on purpose at trial %d\n", trial)
					return 3
				}
			case "crash-always", "stderr-flood":
				fmt.Fprintf(os.Stderr, "fatal: giving up at trial %d\n", trial)
				return 3
			case "hang":
				// A grandchild in the same process group must die with it.
				// It shares the program's stderr, which therefore only
				// ends when the whole group is dead.
				c := exec.Command("sleep", "1000")
				c.Stderr = os.Stderr
				if err := c.Start(); err == nil && marker != "" {
					os.WriteFile(marker, []byte(strconv.Itoa(c.Process.Pid)), 0o600)
				}
				fmt.Fprintln(os.Stderr, "hanging on purpose")
				time.Sleep(time.Hour)
			case "stray":
				out.WriteString("loss 0.25 at step 10\n")
			case "stray-json":
				out.WriteString(`{"loss": 0.25}` + "\n")
			case "wrong-trial":
				trial++
			case "wrong-dim":
				rel[1] = rel[1][:dim-1]
			case "wrong-count":
				rel = rel[:nrel-1]
			case "nan-string":
				raw = fmt.Sprintf(`{"trial": %d, "releases": [[1, 2, 3], [4, "NaN", 6]]}`, trial)
			case "nan-bare":
				raw = fmt.Sprintf(`{"trial": %d, "releases": [[1, 2, 3], [4, NaN, 6]]}`, trial)
			case "overflow":
				raw = fmt.Sprintf(`{"trial": %d, "releases": [[1, 2, 1e999], [4, 5, 6]]}`, trial)
			case "null-value":
				raw = fmt.Sprintf(`{"trial": %d, "releases": [[1, null, 3], [4, 5, 6]]}`, trial)
			case "non-json":
				raw = fmt.Sprintf(`{trial: %d, releases: oops`, trial)
			case "trial-error":
				raw = fmt.Sprintf(`{"trial": %d, "error": "the chain diverged\nat step 12"}`, trial)
			case "both":
				raw = fmt.Sprintf(`{"trial": %d, "error": "x", "releases": [[1,2,3],[4,5,6]]}`, trial)
			case "bad-info":
				raw = fmt.Sprintf(`{"trial": %d, "releases": [[1,2,3],[4,5,6]], "info": [1]}`, trial)
			case "close-stdout":
				os.Stdout.Close()
				time.Sleep(time.Hour)
			case "partial":
				out.WriteString(fmt.Sprintf(`{"trial": %d, "releases": [[1,`, trial))
				out.Flush()
				return 4
			case "long-line":
				raw = fmt.Sprintf(`{"trial": %d, "releases": [[%s1]]}`, trial, strings.Repeat("1", 1<<16))
			}
		}
		var b []byte
		if raw != "" {
			b = append([]byte(raw), '\n')
		} else {
			b = fmt.Appendf(nil, `{"trial": %d, "releases": `, trial)
			b = appendReleases(b, rel)
			b = fmt.Appendf(b, `, "info": {"pid": %d, "seed": %d}}`+"\n", os.Getpid(), req.Seed)
		}
		out.Write(b)
		out.Flush()
	}
	switch mode {
	case "ignore-eof":
		time.Sleep(time.Hour)
	case "exit-1-at-eof":
		fmt.Fprintln(os.Stderr, "cleanup failed")
		return 1
	}
	return 0
}
