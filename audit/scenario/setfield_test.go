package scenario

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/mechanisms"
)

func TestWithNumberSetsACopy(t *testing.T) {
	orig := &mechanisms.SGLD{Step: mechanisms.StepSchedule{Eta: 0.1}, Batch: 10, Iters: 50}
	v, err := WithNumber(orig, "step.eta", 0.25)
	if err != nil {
		t.Fatal(err)
	}
	s := v.(*mechanisms.SGLD)
	if s.Step.Eta != 0.25 || s.Batch != 10 || s.Iters != 50 {
		t.Errorf("copy: eta %g, batch %d, iterations %d; want 0.25, 10, 50", s.Step.Eta, s.Batch, s.Iters)
	}
	if orig.Step.Eta != 0.1 {
		t.Errorf("original changed: eta %g", orig.Step.Eta)
	}
	if v, err = WithNumber(s, "batch", 32); err != nil || v.(*mechanisms.SGLD).Batch != 32 || s.Batch != 10 {
		t.Errorf("batch: %v, %+v, original batch %d", err, v, s.Batch)
	}
	if got, err := NumberAt(v, "batch"); err != nil || got != 32 {
		t.Errorf("NumberAt batch = %g, %v; want 32", got, err)
	}
	if got, err := NumberAt(orig, "clip"); err != nil || got != 0 {
		t.Errorf("NumberAt of a zero field = %g, %v; want 0", got, err)
	}
}

func TestWithNumberRefuses(t *testing.T) {
	s := &mechanisms.SGLD{Step: mechanisms.StepSchedule{Eta: 0.1}, Batch: 10}
	for _, c := range []struct {
		path string
		x    float64
		want error
	}{
		{"tau_x", 1, ErrNoSuchField},
		{"step.zeta", 1, ErrNoSuchField},
		{"batch.size", 1, ErrNoSuchField}, // batch is no mapping
		{"scheme", 2, ErrNotNumber},
		{"batch", 1.5, ErrInexact},
		{"batch", math.Ldexp(1, 63), ErrInexact},
		{"iterations", -0.5, ErrInexact},
	} {
		if _, err := WithNumber(s, c.path, c.x); !errors.Is(err, c.want) {
			t.Errorf("%s = %g: error %v, want %v", c.path, c.x, err, c.want)
		}
	}
	if _, err := NumberAt(s, "nope"); !errors.Is(err, ErrNoSuchField) {
		t.Errorf("NumberAt(nope): %v", err)
	}
	if _, err := NumberAt(s, "scheme"); !errors.Is(err, ErrNotNumber) {
		t.Errorf("NumberAt(scheme): %v", err)
	}
}

// A section behind a nil pointer is allocated, as decoding its key would;
// one behind a set pointer is copied, not written through.
func TestWithNumberPointers(t *testing.T) {
	type inner struct {
		A float64 `yaml:"a"`
		B uint8   `yaml:"b"`
	}
	type outer struct {
		In *inner `yaml:"in"`
	}
	v, err := WithNumber(&outer{}, "in.a", 2.5)
	if err != nil || v.(*outer).In == nil || v.(*outer).In.A != 2.5 {
		t.Fatalf("nil section: %v, %+v", err, v)
	}
	orig := &outer{In: &inner{A: 1, B: 3}}
	v, err = WithNumber(orig, "in.b", 200)
	if err != nil || v.(*outer).In.B != 200 || v.(*outer).In.A != 1 || orig.In.B != 3 {
		t.Errorf("set section: %v, copy %+v, original %+v", err, v.(*outer).In, orig.In)
	}
	if _, err := WithNumber(orig, "in.b", 256); !errors.Is(err, ErrInexact) {
		t.Errorf("256 in a uint8: %v", err)
	}
	if _, err := WithNumber(orig, "in.b", -1); !errors.Is(err, ErrInexact) {
		t.Errorf("-1 in a uint8: %v", err)
	}
	// The scenario's own paths: Lookup documents what WithNumber sets.
	if _, ok := Lookup("sampler.sgld.step.eta"); !ok {
		t.Error("Lookup(sampler.sgld.step.eta) found nothing")
	}
	cfg, err := WithNumber(&Config{}, "sampler.sgld.step.eta", 0.5)
	if err != nil || cfg.(*Config).Sampler.SGLD == nil || cfg.(*Config).Sampler.SGLD.Step.Eta != 0.5 {
		t.Errorf("Config path: %v", err)
	}
}

// Settings parse as the text they stand for: a scenario with settings has
// the hash of the scenario edited to say the same, through a merge key
// too, and leaves the merged mapping as it was for the other keys.
func TestParseConfigSettings(t *testing.T) {
	const base = "name: s\nseed: 7\n<<: {claim: {epsilon: 5, delta: 1.0e-5, gdp: 1}}\n" +
		"model: {linreg: {dim: 1, alpha: 1, beta: 1}}\n" +
		"data: {records: [{x: [0.3], y: 0}, {x: [0], y: 0}]}\n" +
		"neighbour: {index: 1, record: {x: [1], y: 0}}\n" +
		"sampler: {gaussian_query: {sigma: 1}}\n" +
		"audit: {trials: 2000, split: {train: 0.5, eval: 0.5}, delta: 1.0e-5, confidence: 0.95}\n"
	edited := strings.Replace(strings.Replace(base, "sigma: 1", "sigma: 2", 1), "gdp: 1", "gdp: 3", 1)
	want, err := ParseConfig([]byte(edited))
	if err != nil {
		t.Fatal(err)
	}
	var sets []Setting
	for _, s := range []string{"sampler.gaussian_query.sigma=2", "claim.gdp=3"} {
		st, err := ParseSetting(s)
		if err != nil {
			t.Fatal(err)
		}
		sets = append(sets, st)
	}
	got, err := ParseConfig([]byte(base), sets...)
	if err != nil {
		t.Fatal(err)
	}
	if got.Hash() != want.Hash() {
		t.Errorf("settings: hash %s, the edited text's %s", got.Hash()[:12], want.Hash()[:12])
	}
	plain, err := ParseConfig([]byte(base))
	if err != nil {
		t.Fatal(err)
	}
	if *plain.Claim.GDP != 1 || plain.Hash() == got.Hash() {
		t.Error("without settings the scenario is not the one written")
	}
}

// ParseSetting refuses what is no FIELD=VALUE.
func TestParseSettingRefuses(t *testing.T) {
	for _, s := range []string{"", "trials", "=1", ".a=1", "a.=1", "a..b=1", "a. b=1"} {
		if _, err := ParseSetting(s); err == nil {
			t.Errorf("ParseSetting(%q) accepted", s)
		}
	}
	st, err := ParseSetting("audit.attacks=[threshold, lr]=x")
	if err != nil || st.Path != "audit.attacks" || st.Value != "[threshold, lr]=x" {
		t.Errorf("ParseSetting split at the wrong =: %+v, %v", st, err)
	}
}
