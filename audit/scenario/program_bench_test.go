package scenario

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkProgramThroughput compares a NumPy sampler's throughput inside
// the audit (the ULA example of examples/python, one long-lived process,
// one worker, no determinism checks) with the same program's own plain
// loop over the same data (its --standalone mode), in the same run; the
// target is at least 80% of the standalone throughput. Start-up is left
// out of both.
func BenchmarkProgramThroughput(b *testing.B) {
	if exec.Command("/usr/bin/python3", "-c", "import numpy").Run() != nil {
		b.Skip("no /usr/bin/python3 with NumPy")
	}
	const trials = 2000
	c, err := LoadConfig("../../examples/python/ula_logistic.yaml")
	if err != nil {
		b.Fatal(err)
	}
	c.Audit.Trials, c.Audit.Workers = trials, 1
	zero := 0
	c.Sampler.Program.DeterminismChecks = &zero
	p, err := Build(c)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	env, err := p.writeDataFiles()
	if err != nil {
		b.Fatal(err)
	}
	re := regexp.MustCompile(`([0-9.]+) us per trial`)
	var inAudit, alone time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if _, err := p.Audit.Simulate(context.Background(), 0, trials); err != nil {
			b.Fatal(err)
		}
		inAudit += time.Since(start)
		cmd := exec.Command("/usr/bin/python3", append(c.Sampler.Program.Command[1:], "--standalone", strconv.Itoa(trials))...)
		cmd.Dir = "../../examples/python"
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.Output()
		if err != nil {
			b.Fatal(err)
		}
		m := re.FindSubmatch(out)
		if m == nil {
			b.Fatalf("no timing in %q", strings.TrimSpace(string(out)))
		}
		us, _ := strconv.ParseFloat(string(m[1]), 64)
		alone += time.Duration(us * 1e3 * trials)
	}
	n := float64(b.N) * trials
	b.ReportMetric(float64(inAudit.Microseconds())/n, "µs/trial-in-audit")
	b.ReportMetric(float64(alone.Microseconds())/n, "µs/trial-standalone")
	b.ReportMetric(float64(alone)/float64(inAudit), "throughput-ratio")
}
