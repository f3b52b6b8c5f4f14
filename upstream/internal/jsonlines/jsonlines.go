// Package jsonlines reads a trace: one JSON object per line, blank lines and lines starting
// with '#' skipped — the format every harness here reads on its standard input.
package jsonlines

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
)

// Read decodes every line of r into a T, in order; an error names the line.
func Read[T any](r io.Reader) ([]T, error) {
	var items []T
	in := bufio.NewScanner(r)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; in.Scan(); line++ {
		text := in.Bytes()
		if len(text) == 0 || text[0] == '#' {
			continue
		}
		var item T
		if err := json.Unmarshal(text, &item); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		items = append(items, item)
	}
	return items, in.Err()
}
