package scenario

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseConfig feeds arbitrary bytes to the config parser and, when
// they parse, to Build: neither may panic, and an accepted config must
// survive a JSON round trip with the same hash (what shards rely on).
func FuzzParseConfig(f *testing.F) {
	for _, pattern := range []string{"../../testdata/*.yaml", "../../testdata/bad/*.yaml"} {
		files, _ := filepath.Glob(pattern)
		for _, p := range files {
			b, err := os.ReadFile(p)
			if err == nil {
				f.Add(b)
			}
		}
	}
	f.Add(DefaultScenario())
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseConfig(b)
		if err != nil {
			if c != nil {
				t.Fatal("config returned with an error")
			}
			return
		}
		p, err := Build(c)
		if err != nil {
			return
		}
		if p.Hash != c.Hash() {
			t.Fatal("hash changed after Build")
		}
	})
}
