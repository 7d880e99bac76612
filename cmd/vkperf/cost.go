package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Own-cost targets.
const (
	maxCPUShare = 0.03     // of one core
	maxRSS      = 50 << 20 // bytes
	// A run is long enough to judge flat memory when its last two thirds
	// start after the history window (2 min by default) has filled.
	flatMinSoak = 6 * time.Minute
	// flatSlack is how much the last third's mean RSS may exceed the
	// middle third's and still count as flat: allocator and GC noise.
	flatSlack = 0.05
	// floodInterval is the shortest --interval vkwatch accepts: samples
	// come 20 times faster than at the default.
	floodInterval = 10 * time.Millisecond
	floodRun      = 15 * time.Second
	maxFPS        = 20
)

// costVariants are the short runs that show where vkwatch's CPU goes.
var costVariants = []struct {
	name string
	pty  bool
	args []string
}{
	{"no UI (--record /dev/null, no terminal)", false, []string{"--record", os.DevNull}},
	{"UI, --ping-interval 10ms", true, []string{"--ping-interval", "10ms"}},
	{"UI, --ping-interval 100ms", true, []string{"--ping-interval", "100ms"}},
	{"no UI, --ping-interval 100ms", false, []string{"--record", os.DevNull, "--ping-interval", "100ms"}},
}

// costRun is what one attached vkwatch cost over a measured span.
type costRun struct {
	span          time.Duration
	cpu           float64 // share of one core
	rssMax        int64
	thirds        [3]float64 // mean RSS (bytes) of the first, middle and last third
	fps           float64
	bytesPerSec   float64
	serverCPU     []float64 // each watched server's CPU share
	cpuPerTenSecs []float64 // vkwatch's CPU share in each 10 s slice, for the noise
}

func runCost(ctx context.Context, cfg config) ([]check, error) {
	var srvs []*testServer
	defer func() {
		for _, s := range srvs {
			s.stop()
		}
	}()
	for range 2 {
		s, err := startServer(ctx)
		if err != nil {
			return nil, err
		}
		srvs = append(srvs, s)
	}
	fmt.Fprintf(cfg.out, "vkwatch %s %s at defaults, in a %dx%d pseudo-terminal, for %s\n",
		srvs[0].Addr, srvs[1].Addr, termCols, termRows, cfg.soak)
	def, err := measureVKWatch(ctx, cfg, srvs, cfg.soak, true, nil)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(cfg.out, "flood: the same with --interval %s (samples 20x as fast) for %s\n", floodInterval, floodRun)
	flood, err := measureVKWatch(ctx, cfg, srvs, floodRun, true, []string{"--interval", floodInterval.String()})
	if err != nil {
		return nil, err
	}
	// Where the CPU goes: without the UI, and with PINGs less often.
	var parts []string
	for _, v := range costVariants {
		fmt.Fprintf(cfg.out, "breakdown: %s for %s\n", v.name, floodRun)
		r, err := measureVKWatch(ctx, cfg, srvs, floodRun, v.pty, v.args)
		if err != nil {
			return nil, err
		}
		parts = append(parts, fmt.Sprintf("%s %.1f%%", v.name, 100*r.cpu))
	}
	// Controls with nothing of vkwatch in them: the floor of waking every
	// 2 ms on this machine, and of PINGing both servers every 2 ms.
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	for _, c := range []struct {
		name  string
		mode  string
		conns int64
	}{
		{"control: a Go process that only wakes every 2 ms", "timer", 0},
		{"control: a plain Go client PINGing both servers every 2 ms", "ping", 1},
	} {
		fmt.Fprintf(cfg.out, "breakdown: %s for %s\n", c.name, floodRun)
		argv := []string{self, "--control", c.mode}
		for _, s := range srvs {
			argv = append(argv, s.Addr)
		}
		r, err := measure(ctx, cfg, srvs, floodRun, false, argv, c.conns)
		if err != nil {
			return nil, err
		}
		parts = append(parts, fmt.Sprintf("%s %.1f%%", c.name, 100*r.cpu))
	}

	cpu := summarize(def.cpuPerTenSecs)
	checks := []check{
		{
			Target: "Own cost: CPU of vkwatch, two idle servers at defaults, drawing 200x50 <= 3% of one core",
			Measured: fmt.Sprintf("%.2f%% over %s (10 s slices: min %.2f%%, max %.2f%%)",
				100*def.cpu, def.span.Round(time.Second), 100*cpu.Min, 100*cpu.Max),
			Verdict: verdict(def.cpu <= maxCPUShare),
		},
		{
			Target:   "Own cost: resident memory of vkwatch <= 50 MB",
			Measured: fmt.Sprintf("max %.1f MiB", mib(def.rssMax)),
			Verdict:  verdict(def.rssMax <= maxRSS),
		},
	}
	flat := check{
		Target: "Own cost: memory flat over a 10-minute run (last third vs middle third, <= +5%)",
		Measured: fmt.Sprintf("mean RSS by thirds of %s: %.1f / %.1f / %.1f MiB (%+.1f%%)",
			def.span.Round(time.Second), def.thirds[0]/(1<<20), def.thirds[1]/(1<<20), def.thirds[2]/(1<<20),
			100*(def.thirds[2]/def.thirds[1]-1)),
	}
	if cfg.soak >= flatMinSoak {
		flat.Verdict = verdict(def.thirds[2] <= def.thirds[1]*(1+flatSlack))
	} else {
		flat.Verdict = "INFO"
		flat.Measured += fmt.Sprintf("; judged only with --soak >= %s (the 2 min history is still filling)", flatMinSoak)
	}
	checks = append(checks, flat,
		check{
			Target: "Drawing: frames per second at defaults (two servers, 5 samples/s each)",
			Measured: fmt.Sprintf("%.1f fps, %.1f KiB/s to the terminal; each watched server spent %.2f%% / %.2f%% of a core answering",
				def.fps, def.bytesPerSec/1024, 100*def.serverCPU[0], 100*def.serverCPU[1]),
			Verdict: "INFO",
		},
		check{
			Target:   "Own cost, breakdown: vkwatch CPU (share of one core) without the UI, and by PING interval",
			Measured: strings.Join(parts, "; "),
			Verdict:  "INFO",
		},
		check{
			Target: "Drawing: UI draws at a human rate however fast samples come (--interval 10ms: <= 20 fps)",
			Measured: fmt.Sprintf("%.1f fps with 200 samples/s; vkwatch CPU %.1f%%, RSS max %.1f MiB",
				flood.fps, 100*flood.cpu, mib(flood.rssMax)),
			Verdict: verdict(flood.fps <= maxFPS),
		},
	)
	return checks, nil
}

// measureVKWatch runs vkwatch on the servers in a pseudo-terminal and
// samples its CPU time and RSS every second for span, after it has
// connected and drawn its first frames.
func measureVKWatch(ctx context.Context, cfg config, srvs []*testServer, span time.Duration, withPTY bool, extra []string) (costRun, error) {
	argv := []string{cfg.vkwatch}
	for _, s := range srvs {
		argv = append(argv, s.Addr)
	}
	// vkwatch keeps two connections per server: the sampler and the probe.
	return measure(ctx, cfg, srvs, span, withPTY, append(argv, extra...), 2)
}

// measure runs argv, in a pseudo-terminal or with no terminal, and samples
// its CPU time and RSS every second for span once it holds conns
// connections to each server (and, in a terminal, has drawn).
func measure(ctx context.Context, cfg config, srvs []*testServer, span time.Duration, withPTY bool, argv []string, conns int64) (costRun, error) {
	bases := make([]int64, len(srvs))
	for i, s := range srvs {
		n, err := s.clients(ctx)
		if err != nil {
			return costRun{}, err
		}
		bases[i] = n
	}
	name := filepath.Base(argv[0])
	start := startInPTY
	if !withPTY {
		start = startHeadless
	}
	a, err := start(name, argv...)
	if err != nil {
		return costRun{}, err
	}
	defer a.stop()
	for i, s := range srvs {
		if err := s.waitClients(ctx, bases[i]+conns, 15*time.Second); err != nil {
			return costRun{}, err
		}
	}
	if err := waitUntil(ctx, name+" drawing", 15*time.Second, func() (bool, error) {
		if a.exited() {
			return false, fmt.Errorf("%s %w: %v", name, errExited, a.err)
		}
		return !withPTY || a.frames.Load() >= 2, nil
	}); err != nil {
		return costRun{}, err
	}

	type point struct {
		self    usage
		servers []usage
		frames  int64
		bytes   int64
	}
	read := func() (point, error) {
		p := point{frames: a.frames.Load(), bytes: a.bytes.Load()}
		var err error
		if p.self, err = readUsage(a.pid()); err != nil {
			return p, err
		}
		for _, s := range srvs {
			u, err := readUsage(s.PID())
			if err != nil {
				return p, err
			}
			p.servers = append(p.servers, u)
		}
		return p, nil
	}
	first, err := read()
	if err != nil {
		return costRun{}, err
	}
	points := []point{first}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	report := 10 * time.Second
	if span >= 5*time.Minute {
		report = time.Minute
	}
	for time.Since(first.self.at) < span {
		select {
		case <-ctx.Done():
			return costRun{}, ctx.Err()
		case <-tick.C:
		}
		if a.exited() {
			return costRun{}, fmt.Errorf("vkwatch exited during the run: %v", a.err)
		}
		p, err := read()
		if err != nil {
			return costRun{}, err
		}
		points = append(points, p)
		if el := p.self.at.Sub(first.self.at); el.Round(time.Second)%report == 0 {
			fmt.Fprintf(cfg.out, "  %6s  cpu %.2f%%  rss %.1f MiB  frames %d\n", el.Round(time.Second),
				100*cpuShare(first.self, p.self), mib(p.self.rss), p.frames-first.frames)
		}
	}
	last := points[len(points)-1]
	wall := last.self.at.Sub(first.self.at).Seconds()
	r := costRun{
		span:        last.self.at.Sub(first.self.at),
		cpu:         cpuShare(first.self, last.self),
		fps:         float64(last.frames-first.frames) / wall,
		bytesPerSec: float64(last.bytes-first.bytes) / wall,
	}
	for i := range srvs {
		r.serverCPU = append(r.serverCPU, cpuShare(first.servers[i], last.servers[i]))
	}
	var sums [3]float64
	var counts [3]int
	for i, p := range points {
		r.rssMax = max(r.rssMax, p.self.rss)
		t := min(3*i/len(points), 2)
		sums[t] += float64(p.self.rss)
		counts[t]++
	}
	for t := range sums {
		if counts[t] > 0 {
			r.thirds[t] = sums[t] / float64(counts[t])
		}
	}
	for i := 10; i < len(points); i += 10 {
		r.cpuPerTenSecs = append(r.cpuPerTenSecs, cpuShare(points[i-10].self, points[i].self))
	}
	fmt.Fprintf(cfg.out, "  cpu %.2f%% of a core, rss max %.1f MiB, %.1f fps, %.1f KiB/s drawn\n",
		100*r.cpu, mib(r.rssMax), r.fps, r.bytesPerSec/1024)
	return r, nil
}
