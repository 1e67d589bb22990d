package testutil

import "strings"

// ContainsInOrder reports whether s contains the parts of want separated
// by " … ", in that order: an expected message can leave out what a
// registry lists (the registered names) and still pin the field, the
// first and last names and the value refused.
func ContainsInOrder(s, want string) bool {
	for _, part := range strings.Split(want, " … ") {
		i := strings.Index(s, part)
		if i < 0 {
			return false
		}
		s = s[i+len(part):]
	}
	return true
}
