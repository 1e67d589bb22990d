package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// The command list in doc.go (what "go doc" shows) names exactly the
// commands that "audit -h" lists, in the same order.
func TestDocListsEveryCommand(t *testing.T) {
	b, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i := strings.Index(text, "// Commands:")
	if i < 0 {
		t.Fatal("doc.go has no Commands: section")
	}
	row := regexp.MustCompile(`(?m)^//\t([a-z]+) +\S`)
	var documented []string
	for _, m := range row.FindAllStringSubmatch(text[i:], -1) {
		documented = append(documented, m[1])
	}
	var actual []string
	for _, c := range commands() {
		actual = append(actual, c.name)
	}
	if strings.Join(documented, " ") != strings.Join(actual, " ") {
		t.Errorf("doc.go lists %v; the commands are %v", documented, actual)
	}
}
