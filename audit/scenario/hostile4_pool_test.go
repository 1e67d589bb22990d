package scenario

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// poolConfig is a canary design drawing mislabel canaries from pool.csv
// in dir.
func poolConfig(t *testing.T, dir string) *Config {
	t.Helper()
	c, err := ParseConfig([]byte(poolScenario))
	if err != nil {
		t.Fatal(err)
	}
	c.baseDir = dir
	return c
}

// The canary pool is held to its documented limits (MaxPoolBytes,
// MaxPoolRecords, MaxPoolValues) while it is read: a larger file by its
// size before any read, too many records or values while its text is
// scanned, before any value is kept; a FIFO is refused without waiting
// for a writer. It was read whole up to 256 MB and parsed up to 10⁶
// records (a 120 MB pool of 10⁶ rows took 300 MB), and a FIFO hung.
func TestCanaryPoolLimits(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "pool.csv")
	draw := func() error {
		done := make(chan error, 1)
		go func() {
			c := poolConfig(t, dir)
			_, err := drawCanaries(c, &Plan{}, nil)
			done <- c.named(err)
		}()
		select {
		case err := <-done:
			return err
		case <-time.After(20 * time.Second):
			t.Fatal("the pool is still being read after 20 s")
			return nil
		}
	}
	check := func(name, want string) {
		t.Helper()
		if err := draw(); err == nil || !strings.HasPrefix(err.Error(), "audit.canaries.pool: ") || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", name, err, want)
		}
	}
	if err := syscall.Mkfifo(path, 0o644); err == nil {
		check("FIFO", path+" is not a regular file (a FIFO)")
		os.Remove(path)
	}
	os.Mkdir(path, 0o755)
	check("directory", path+" is not a regular file (a directory)")
	os.Remove(path)

	f, _ := os.Create(path)
	f.Truncate(MaxPoolBytes + 1) // sparse
	f.Close()
	check("size", "has 33554433 bytes, more than the limit of 33554432")

	header := "x1,y\n"
	rows := strings.Repeat("0.5,1\n0.25,0\n", MaxPoolRecords/2)
	os.WriteFile(path, []byte(header+rows+"1,2\n"), 0o644)
	check("records", "line 100002: more than max_records = 100000 rows")

	// 10,100 rows of 1000 features, gzip-compressed: 20 MB of text in a
	// few kB, as 101 gzip members of 100 rows each.
	var member bytes.Buffer
	zw := gzip.NewWriter(&member)
	zw.Write([]byte(strings.Repeat(strings.Repeat("1,", 1000)+"0\n", 100)))
	zw.Close()
	var first bytes.Buffer
	zw = gzip.NewWriter(&first)
	zw.Write([]byte(strings.Repeat("x,", 1000) + "y\n"))
	zw.Close()
	os.WriteFile(path, append(first.Bytes(), bytes.Repeat(member.Bytes(), 101)...), 0o644)
	check("values", "more than 10000000 feature values")

	// At the limit, a pool is read.
	os.WriteFile(path, []byte(header+rows), 0o644)
	if cs, err := drawCanaries(poolConfig(t, dir), &Plan{}, nil); err != nil || len(cs) != 5 {
		t.Errorf("a pool of %d records: %v", MaxPoolRecords, err)
	}
}

// A scenario file that is a FIFO is refused by LoadConfig without waiting
// for a writer (the command line checked it, LoadConfig did not: audit
// analyze --scenario FIFO hung).
func TestLoadConfigFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "scen.yaml")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	done := make(chan error, 1)
	go func() { _, err := LoadConfig(p); done <- err }()
	select {
	case err := <-done:
		want := "config: cannot read " + p + ": it is a FIFO, not a regular file"
		if err == nil || err.Error() != want {
			t.Errorf("got %v, want %q", err, want)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("LoadConfig still waiting on a FIFO after 20 s")
	}
}
