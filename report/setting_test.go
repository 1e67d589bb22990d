package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/mechanisms"
)

// A program may report clipped_grads without grad_evals: the count is
// printed alone, never "146127 of 0"; with both, as a count of the total.
func TestSettingClippedGradientsWithoutTotal(t *testing.T) {
	for _, c := range []struct {
		info      mechanisms.Info
		want, not string
	}{
		{mechanisms.Info{ClippedGrads: 146127}, "sampler    clipped gradients: 146127\n", " of "},
		{mechanisms.Info{ClippedGrads: 7, GradEvals: 40}, "sampler    clipped gradients: 7 of 40\n", ""},
	} {
		var b bytes.Buffer
		writeSetting(&b, &audit.Report{Info: c.info})
		out := b.String()
		if !strings.Contains(out, c.want) || c.not != "" && strings.Contains(out, "clipped gradients: 146127"+c.not) {
			t.Errorf("%+v: got\n%s\nwant a line %q", c.info, out, c.want)
		}
	}
}
