package page

import (
	_ "embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"time"
)

//go:embed page.html.tmpl
var pageSource string

// tmpl is the page, parsed once. Figures reach it as template.HTML: gonum's SVG
// writer escapes every text it draws (html.EscapeString), and every text
// from a file went through clean first.
var tmpl = template.Must(template.New("page").Funcs(template.FuncMap{
	"svg": func(f *Figure) (template.HTML, error) {
		b, err := f.svg()
		if err != nil {
			return "", err
		}
		return template.HTML(inlineSVG(b)), nil
	},
	// colour passes a colour this package chose (#rrggbb) to a style
	// attribute; html/template would refuse any other.
	"colour": func(s string) template.CSS { return template.CSS("color:" + s) },
	"plural": plural,
}).Parse(pageSource))

type pageData struct {
	*Page
	Generated string
	Version   string
}

// WriteHTML writes the page. generated is when the page was made, shown
// on it; version is vkwatch's.
func (r *Page) WriteHTML(w io.Writer, generated time.Time, version string) error {
	return tmpl.Execute(w, pageData{Page: r, Generated: generated.UTC().Format("2006-01-02 15:04:05 UTC"), Version: clean(version)})
}

// svg renders the figure once; the page and --figures share it.
func (f *Figure) svg() ([]byte, error) {
	if f.svgBytes == nil {
		b, err := f.SVG()
		if err != nil {
			return nil, err
		}
		f.svgBytes = b
	}
	return f.svgBytes, nil
}

// WriteFigures writes every figure into dir as NAME.svg and NAME.png, each
// file whole or not at all (WriteFileAtomic). dir is created if missing.
func (r *Page) WriteFigures(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var written []string
	for _, f := range r.Figures {
		svg, err := f.svg()
		if err != nil {
			return written, fmt.Errorf("figure %s: %w", f.Name, err)
		}
		png, err := f.PNG()
		if err != nil {
			return written, fmt.Errorf("figure %s: %w", f.Name, err)
		}
		for _, out := range []struct {
			ext  string
			data []byte
		}{{".svg", svg}, {".png", png}} {
			p, data := filepath.Join(dir, f.Name+out.ext), out.data
			if err := WriteFileAtomic(p, func(w io.Writer) error { _, err := w.Write(data); return err }); err != nil {
				return written, err
			}
			written = append(written, p)
		}
	}
	return written, nil
}

// WriteFileAtomic writes path through a temporary file in the same
// directory and renames it into place once write succeeded and the data is
// on disk: a failure, a crash or a kill never leaves a half-written file
// under path, nor replaces what was there.
func WriteFileAtomic(path string, write func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		// Name the directory, not the temporary file the user never asked for.
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("cannot create a file in %s: %w", dir, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = write(tmp); err != nil {
		return err
	}
	if err = tmp.Chmod(0o644); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// MinCurvePoints is the fewest progress reports a save's cost curve needs.
func (pageData) MinCurvePoints() int { return minCurvePoints }
