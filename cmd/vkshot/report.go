package main

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/vkwatch/vkwatch/source/server"
)

// reportConfig is the bench whose report --report photographs.
type reportConfig struct {
	keys, saveDelay, runs int
	window                time.Duration
	width                 int // the browser's width, CSS pixels
	dpi                   int // the A4 pages' resolution
}

// The pictures --report writes into OUT/report.
const (
	firstPicture = "first.png" // the first screen of the page at 1400 px
	pagePicture  = "page.png"  // the page at 1400 px, whole
	printPicture = "print.png" // its A4 pages, two abreast
	// --figures output the README showed before the page had a summary:
	// kept, and made anew with the rest.
	memoryFigure = "memory.png"
	costFigure   = "cost-cow.png"
)

// runReport makes the README's pictures of vkwatch report from the real
// thing: two real servers, a real bench recorded, its report, opened in
// headless Chromium at rc.width and printed to A4 (pdftoppm turns the PDF
// into pictures).
func runReport(c config, rc reportConfig) error {
	if _, err := exec.LookPath("pdftoppm"); err != nil {
		return fmt.Errorf("--report turns the printed page into pictures with pdftoppm: apt-get install poppler-utils (%v)", err)
	}
	dir, err := os.MkdirTemp("", "vkshot-report-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin, err := filepath.Abs(c.vkwatch) // bench and report run in dir
	if c.vkwatch == "" {
		bin, err = buildVKWatch(dir)
	}
	if err != nil {
		return err
	}
	page, figs, err := benchReport(bin, dir, rc)
	if err != nil {
		return err
	}
	out := filepath.Join(c.out, "report")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := photograph(page, dir, out, rc); err != nil {
		return err
	}
	mem, _ := filepath.Glob(filepath.Join(figs, "01-*-memory.png"))
	if len(mem) != 1 {
		return fmt.Errorf("--figures wrote no memory figure of the first server into %s", figs)
	}
	cost := filepath.Join(figs, "cost-cow.png")
	if _, err := os.Stat(cost); err != nil {
		return fmt.Errorf("no save had enough progress reports for a cost curve (%v): a longer save, with more --report-keys or --report-save-delay, has", err)
	}
	for from, to := range map[string]string{mem[0]: memoryFigure, cost: costFigure} {
		if err := copyFile(from, filepath.Join(out, to)); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "vkshot: %s: %s, %s, %s, %s, %s\n", out, firstPicture, pagePicture, printPicture, memoryFigure, costFigure)
	return nil
}

// benchReport starts two servers, runs vkwatch bench on them at the same
// time (--parallel: each figure shows its server throughout), recorded,
// and vkwatch report of the recording and the results; it returns the
// page and the directory of its figures.
func benchReport(bin, dir string, rc reportConfig) (page, figs string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var addrs []string
	for range 2 {
		s, err := server.Start(ctx, server.Options{Args: []string{"--save", "", "--rdb-key-save-delay", strconv.Itoa(rc.saveDelay)}})
		if err != nil {
			return "", "", fmt.Errorf("start a server for the bench: %w", err)
		}
		defer s.Stop()
		addrs = append(addrs, s.Addr)
	}
	// Run in dir, with plain file names: the page names its files.
	const rec, results = "bench.jsonl", "bench.json"
	n := strconv.Itoa(rc.keys)
	bench := append(append([]string{"bench"}, addrs...), "--preload", n, "--keys", n, "--runs", strconv.Itoa(rc.runs),
		"--window", rc.window.String(), "--writers", "2", "--parallel", "--record", rec, "--json")
	fmt.Fprintf(os.Stderr, "vkshot: vkwatch %v\n", bench)
	cmd := exec.CommandContext(ctx, bin, bench...)
	var stdout, stderr bytes.Buffer
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", "", fmt.Errorf("vkwatch bench: %v\n%s", err, stderr.Bytes())
	}
	if err := os.WriteFile(filepath.Join(dir, results), stdout.Bytes(), 0o644); err != nil {
		return "", "", err
	}
	cmd = exec.CommandContext(ctx, bin, "report", rec, results, "-o", "report.html", "--figures", "figures")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("vkwatch report: %v\n%s", err, out)
	}
	return filepath.Join(dir, "report.html"), filepath.Join(dir, "figures"), nil
}

// photograph opens page in headless Chromium: a picture of its first
// screen and one of the whole page, rc.width pixels wide, and its A4
// print, each page a picture by pdftoppm, laid two abreast in one.
func photograph(page, dir, out string, rc reportConfig) error {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.NoSandbox,                           // as root (CI), Chromium's sandbox will not start
		chromedp.WindowSize(rc.width, rc.width*9/14), // the first screen: 1400 x 900
		chromedp.UserDataDir(filepath.Join(dir, "chromium")),
	)
	if p, err := exec.LookPath("chromium"); err == nil {
		opts = append(opts, chromedp.ExecPath(p))
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelA()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	if err := chromedp.Do(ctx); err != nil {
		return fmt.Errorf("chromium: %w", err)
	}
	tctx, cancelT := context.WithTimeout(ctx, 2*time.Minute)
	defer cancelT()
	if err := chromedp.Do(tctx, chromedp.Navigate("file://"+page), chromedp.WaitReady("body")); err != nil {
		return fmt.Errorf("chromium: %w", err)
	}
	for name, shoot := range map[string]chromedp.Action[[]byte]{firstPicture: chromedp.CaptureScreenshot(), pagePicture: chromedp.FullScreenshot(100)} {
		shot, err := chromedp.Run(tctx, shoot)
		if err != nil {
			return fmt.Errorf("chromium: screenshot: %w", err)
		}
		if err := os.WriteFile(filepath.Join(out, name), shot, 0o644); err != nil {
			return err
		}
	}
	pdf, err := chromedp.Run(tctx, chromedp.PrintToPDF(chromedp.PDFPreferCSSPageSize(), chromedp.PDFPrintBackground()))
	if err != nil {
		return fmt.Errorf("chromium: print: %w", err)
	}
	pages, err := rasterise(pdf, dir, rc.dpi)
	if err != nil {
		return err
	}
	return writePNG(filepath.Join(out, printPicture), abreast(pages))
}

// rasterise turns each page of pdf into a picture at dpi, with pdftoppm.
func rasterise(pdf []byte, dir string, dpi int) ([]image.Image, error) {
	in := filepath.Join(dir, "print.pdf")
	if err := os.WriteFile(in, pdf, 0o644); err != nil {
		return nil, err
	}
	if out, err := exec.Command("pdftoppm", "-r", strconv.Itoa(dpi), "-png", in, filepath.Join(dir, "print")).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("pdftoppm: %v\n%s", err, out)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "print-*.png"))
	// print-1.png .. print-9.png, or print-01.png .. with ten or more.
	sort.Slice(files, func(i, j int) bool {
		return len(files[i]) < len(files[j]) || len(files[i]) == len(files[j]) && files[i] < files[j]
	})
	if len(files) == 0 {
		return nil, fmt.Errorf("pdftoppm made no page of the printed report")
	}
	var pages []image.Image
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		pages = append(pages, img)
	}
	return pages, nil
}

// abreast lays pages out two to a row on grey, as sheets on a desk.
func abreast(pages []image.Image) image.Image {
	const gap = 12
	w, h := pages[0].Bounds().Dx(), pages[0].Bounds().Dy()
	cols := min(2, len(pages))
	rows := (len(pages) + cols - 1) / cols
	out := image.NewRGBA(image.Rect(0, 0, cols*(w+gap)+gap, rows*(h+gap)+gap))
	draw.Draw(out, out.Bounds(), &image.Uniform{color.Gray{0x99}}, image.Point{}, draw.Src)
	for i, p := range pages {
		at := image.Pt(gap+(i%cols)*(w+gap), gap+(i/cols)*(h+gap))
		draw.Draw(out, image.Rectangle{Min: at, Max: at.Add(p.Bounds().Size())}, p, p.Bounds().Min, draw.Src)
	}
	return out
}

func writePNG(path string, img image.Image) error {
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
}
