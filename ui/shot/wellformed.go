package shot

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
)

// WellFormed reports whether b is well-formed XML whose root element is
// svg: what a picture this package writes must be. The product's tests and
// vkshot's check their pictures with it.
func WellFormed(b []byte) error {
	d := xml.NewDecoder(bytes.NewReader(b))
	root := ""
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("not well-formed XML: %w", err)
		}
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	if root != "svg" {
		return fmt.Errorf("root element %q, want svg", root)
	}
	return nil
}
