package scenario

import (
	"strings"
	"testing"
)

// An "exactly one of" note names each member of the group once, and only
// the fields of the same section: the crafting sampler of a DeepFool
// canary copies sampler.sgld's fields with their group names, and
// `--explain sampler.sgld` once listed "epochs, iterations, epochs,
// iterations".
func TestExactlyOneOfNamesSiblingsOnce(t *testing.T) {
	fields := Reference()
	checked := 0
	for _, f := range fields {
		if f.Group == "" {
			continue
		}
		req := requiredText(f)
		i := strings.Index(req, "exactly one of ")
		if i < 0 {
			t.Errorf("%s: group %q but no 'exactly one of' in %q", f.Path, f.Group, req)
			continue
		}
		list := strings.SplitN(req[i+len("exactly one of "):], ";", 2)[0]
		parent, _ := splitPath(f.Path)
		want := map[string]bool{}
		for _, g := range fields {
			if gp, key := splitPath(g.Path); gp == parent && g.Group == f.Group {
				want[key] = true
			}
		}
		seen := map[string]bool{}
		for _, name := range strings.Split(list, ", ") {
			if seen[name] {
				t.Errorf("%s: %q names %s twice", f.Path, list, name)
			}
			seen[name] = true
			if !want[name] {
				t.Errorf("%s: %q names %s, not a field of %s in its group", f.Path, list, name, parent)
			}
		}
		if len(seen) != len(want) || len(want) < 2 {
			t.Errorf("%s: %q, want the %d fields of its group in %s", f.Path, list, len(want), parent)
		}
		checked++
	}
	if checked < 6 {
		t.Errorf("only %d grouped fields checked", checked)
	}
}
