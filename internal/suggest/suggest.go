package suggest

import "strings"

// Distance is the Damerau–Levenshtein distance between a and b in its
// restricted form (optimal string alignment): the least number of
// insertions, deletions, substitutions of one character, and swaps of two
// adjacent characters, that turn a into b. It counts runes, not bytes.
func Distance(a, b string) int {
	s, t := []rune(a), []rune(b)
	// d[i][j] is the distance between s[:i] and t[:j]; three rows suffice.
	prev2 := make([]int, len(t)+1)
	prev := make([]int, len(t)+1)
	cur := make([]int, len(t)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(s); i++ {
		cur[0] = i
		for j := 1; j <= len(t); j++ {
			cost := 1
			if s[i-1] == t[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && s[i-1] == t[j-2] && s[i-2] == t[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(t)]
}

// Nearest returns the candidate closest to word, and whether it is close
// enough to be worth suggesting: at most max(1, ⌊len/3⌋) edits away
// (counting letters case-insensitively, and treating "-" and "_" alike),
// or word is a prefix of that candidate and of no other. Ties go to the
// earlier candidate.
func Nearest(word string, candidates []string) (string, bool) {
	w := normalise(word)
	if w == "" {
		return "", false
	}
	best, bestD := "", -1
	for _, c := range candidates {
		d := Distance(w, normalise(c))
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	if bestD < 0 {
		return "", false
	}
	if bestD <= max(1, len([]rune(w))/3) {
		return best, true
	}
	var prefixed []string
	for _, c := range candidates {
		if strings.HasPrefix(normalise(c), w) {
			prefixed = append(prefixed, c)
		}
	}
	if len(prefixed) == 1 {
		return prefixed[0], true
	}
	return "", false
}

func normalise(s string) string {
	return strings.ReplaceAll(strings.ToLower(s), "-", "_")
}
