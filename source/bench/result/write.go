package result

import "io"

// Write prints a bench's results as vkwatch bench does: JSON when asJSON,
// else the table (a table a server, one after the other, for more than
// two).
func Write(w io.Writer, asJSON bool, s []Summary) error {
	switch {
	case asJSON:
		return WriteJSON(w, s)
	case len(s) > 2:
		return WriteTables(w, s)
	}
	return WriteTable(w, s)
}
