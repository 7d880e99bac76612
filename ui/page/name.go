package page

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Name is the page vkwatch report writes without -o: named after its input,
// in the input's directory, its extensions (.jsonl, .json, .csv and
// .zst, .gz) replaced by .html. Several inputs need the same name (a
// bench's recording and its --json), else -o: a page named after one of
// them would be a guess.
func Name(paths []string) (string, error) {
	stem := func(p string) string {
		dir, base := filepath.Split(filepath.Clean(p))
		for _, ext := range []string{".zst", ".gz", ".jsonl", ".json", ".csv"} {
			if s, ok := strings.CutSuffix(base, ext); ok && s != "" {
				base = s
			}
		}
		return dir + base
	}
	name := stem(paths[0])
	for _, p := range paths[1:] {
		if stem(p) != name {
			return "", fmt.Errorf("%s and %s would name different pages: name the page with -o PAGE.html", paths[0], p)
		}
	}
	return name + ".html", nil
}
