package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Own-cost targets.
const (
	maxCPUShare = 0.03     // of one core (issue 6's absolute target)
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
	// fleetSize is the fleet of the comparison at a PING budget.
	fleetSize = 6
)

// cpuCase is one configuration of vkwatch whose CPU is compared with the
// reference prober's on the same servers at the same PING rate.
type cpuCase struct {
	short string // its name for --cases
	name  string
	n     int  // servers watched
	pty   bool // drawing in a 200x50 pseudo-terminal; else --record FILE without a terminal
	args  []string
	limit float64 // 0: no target of its own (see probeCheck, floorCheck)
	fleet bool    // the reference's interval is taken from vkwatch's own PING rate
	// nextTick measures the reference prober in its -n mode (a reply read
	// at the next tick: one wake-up per PING, as vkwatch's probe) in
	// vkwatch's place.
	nextTick bool
}

// The cases, by index: probeCheck subtracts caseQuiet from caseRecord;
// floorCheck reads caseOne, caseIdle and caseNextTick.
const (
	caseRecord   = 1
	caseQuiet    = 2
	caseOne      = 3
	caseIdle     = 4
	caseNextTick = 5
)

var cpuCases = []cpuCase{
	{short: "two", name: "two idle servers at defaults (PING every 2 ms), drawing 200x50", n: 2, pty: true, limit: 1.3},
	{short: "record", name: "two idle servers at defaults, --record FILE without a terminal", n: 2, limit: 1.15},
	{short: "quiet", name: "two idle servers, --record FILE, --ping-interval 100ms (20 PINGs/s)", n: 2, args: []string{"--ping-interval", "100ms"}},
	{short: "one", name: "one idle server at defaults, drawing 200x50", n: 1, pty: true, limit: 1.3},
	{short: "idle", name: "one idle server, drawing 200x50, --interval 10s (the probe and an idle UI: a sample and a frame every 10 s)",
		n: 1, pty: true, args: []string{"--interval", "10s"}},
	{short: "nexttick", name: "one server, the reference prober with -n (each reply read at the next tick: one wake-up per PING)",
		n: 1, nextTick: true},
	{short: "six", name: fmt.Sprintf("a fleet of %d idle servers (vkwatch A B C D E F, its PING budget), drawing 200x50", fleetSize),
		n: fleetSize, pty: true, limit: 1.3, fleet: true},
}

func caseNames() []string {
	var out []string
	for _, c := range cpuCases {
		out = append(out, c.short)
	}
	return out
}

// costVariants are the short runs that show where vkwatch's CPU goes.
var costVariants = []struct {
	name string
	pty  bool
	args []string
}{
	{"--record /dev/null, no terminal", false, []string{"--record", os.DevNull}},
	{"UI, --ping-interval 100ms", true, []string{"--ping-interval", "100ms"}},
}

// costRun is what one attached program cost over a measured span.
type costRun struct {
	span          time.Duration
	cpu           float64 // share of one core
	rssMax        int64
	thirds        [3]float64 // mean RSS (bytes) of the first, middle and last third
	fps           float64
	bytesPerSec   float64
	serverCPU     []float64 // each watched server's CPU share
	cpuPerTenSecs []float64 // the CPU share in each 10 s slice, for the noise
	pingsPerSec   float64   // PINGs the servers executed per second, all together
}

func runCost(ctx context.Context, cfg config) ([]check, error) {
	srvs, stop, err := startServers(ctx, fleetSize)
	defer stop()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "vkperf-rec-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)

	var checks []check
	cmp, rss, err := compareCPU(ctx, cfg, srvs, dir)
	checks = append(checks, cmp...)
	if err != nil || cfg.cases != nil {
		return checks, err
	}

	two := srvs[:2]
	var soak *costRun
	if cfg.soak > 0 {
		fmt.Fprintf(cfg.out, "soak: vkwatch %s %s at defaults, in a %dx%d pseudo-terminal, for %s\n",
			two[0].Addr, two[1].Addr, termCols, termRows, cfg.soak)
		r, err := measureVKWatch(ctx, cfg, two, cfg.soak, true, nil)
		if err != nil {
			return checks, err
		}
		soak = &r
		rss = max(rss, r.rssMax)
	}
	fmt.Fprintf(cfg.out, "flood: two servers with --interval %s --idle-interval 0 (samples 20x as fast as --interval's default) for %s\n", floodInterval, floodRun)
	// Every sample at that interval, at rest too.
	flood, err := measureVKWatch(ctx, cfg, two, floodRun, true, []string{"--interval", floodInterval.String(), "--idle-interval", "0"})
	if err != nil {
		return checks, err
	}
	// Where the CPU goes: without the UI, and with PINGs less often.
	var parts []string
	for _, v := range costVariants {
		fmt.Fprintf(cfg.out, "breakdown: two servers, %s for %s\n", v.name, cfg.span)
		r, err := measureVKWatch(ctx, cfg, two, cfg.span, v.pty, v.args)
		if err != nil {
			return checks, err
		}
		parts = append(parts, fmt.Sprintf("%s %.2f%%", v.name, 100*r.cpu))
	}

	checks = append(checks,
		check{
			Target:   "Own cost: resident memory of vkwatch <= 50 MB",
			Measured: fmt.Sprintf("max %.1f MiB over every vkwatch run of this phase", mib(rss)),
			Verdict:  verdict(rss <= maxRSS),
		})
	if soak != nil {
		checks = append(checks, soakChecks(cfg, soak)...)
	}
	checks = append(checks,
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

// soakChecks are the checks of a long run at defaults: CPU, memory flat
// over the run, frames drawn.
func soakChecks(cfg config, soak *costRun) []check {
	cpu := summarize(soak.cpuPerTenSecs)
	flat := check{
		Target: "Own cost: memory flat over a 10-minute run (last third vs middle third, <= +5%)",
		Measured: fmt.Sprintf("mean RSS by thirds of %s: %.1f / %.1f / %.1f MiB (%+.1f%%)",
			soak.span.Round(time.Second), soak.thirds[0]/(1<<20), soak.thirds[1]/(1<<20), soak.thirds[2]/(1<<20),
			100*(soak.thirds[2]/soak.thirds[1]-1)),
	}
	if cfg.soak >= flatMinSoak {
		flat.Verdict = verdict(soak.thirds[2] <= soak.thirds[1]*(1+flatSlack))
	} else {
		flat.Verdict = "INFO"
		flat.Measured += fmt.Sprintf("; judged only with --soak >= %s (the 2 min history is still filling)", flatMinSoak)
	}
	return []check{
		{
			Target: "Own cost: CPU of vkwatch, two idle servers at defaults, drawing 200x50 <= 3% of one core (issue 6)",
			Measured: fmt.Sprintf("%.2f%% over %s (10 s slices: min %.2f%%, max %.2f%%)",
				100*soak.cpu, soak.span.Round(time.Second), 100*cpu.Min, 100*cpu.Max),
			Verdict: verdict(soak.cpu <= maxCPUShare),
		},
		flat,
		{
			Target: "Drawing: frames per second at defaults (two servers at rest, a sample a second each)",
			Measured: fmt.Sprintf("%.1f fps, %.1f KiB/s to the terminal; each watched server spent %.2f%% / %.2f%% of a core answering",
				soak.fps, soak.bytesPerSec/1024, 100*soak.serverCPU[0], 100*soak.serverCPU[1]),
			Verdict: "INFO",
		},
	}
}

// cpuPair is one round's measurement of a case: vkwatch and the reference.
type cpuPair struct{ vk, ref costRun }

// compareCPU runs every cpuCase against the reference prober on the same
// servers, cfg.rounds times, the order of the two flipping from round to
// round, and returns the checks and the largest RSS vkwatch had.
func compareCPU(ctx context.Context, cfg config, srvs []*testServer, dir string) ([]check, int64, error) {
	fmt.Fprintf(cfg.out, "CPU against the reference prober: %d rounds of %s per program and case, in alternating order\n",
		cfg.rounds, cfg.span)
	var checks []check
	var rssMax int64
	notRun := func(c cpuCase, why string) {
		checks = append(checks, check{Target: cpuTarget(c), Measured: "could not run: " + why, Verdict: "MISS"})
	}
	if !cfg.ref.ok() {
		for _, c := range cpuCases {
			notRun(c, cfg.ref.missing)
		}
		return checks, 0, nil
	}
	fleetInterval, fleetErr := fleetCaseInterval(ctx, cfg, srvs)

	pairs := make([][]cpuPair, len(cpuCases))
	recN := 0
	for round := range cfg.rounds {
		refRuns := map[string]costRun{} // by servers and interval: shared by the cases that match
		for ci, c := range cpuCases {
			if (c.fleet && fleetErr != nil) || !cfg.runs(c) {
				continue
			}
			interval := probeInterval
			if c.fleet {
				interval = fleetInterval
			}
			s := srvs[:c.n]
			args := slices.Clone(c.args)
			if !c.pty {
				recN++
				args = append(args, "--record", filepath.Join(dir, fmt.Sprintf("rec-%d.jsonl", recN)))
			}
			key := fmt.Sprintf("%d/%s", c.n, interval)
			runRef := func() error {
				if _, ok := refRuns[key]; ok {
					return nil
				}
				fmt.Fprintf(cfg.out, "round %d: reference prober, %d server(s), every %s\n", round+1, c.n, interval)
				r, err := measure(ctx, cfg, s, cfg.span, false, cfg.ref.argv(interval, s, false), 1)
				refRuns[key] = r
				return err
			}
			var vk costRun
			runVK := func() error {
				var err error
				if c.nextTick {
					fmt.Fprintf(cfg.out, "round %d: %s\n", round+1, c.name)
					vk, err = measure(ctx, cfg, s, cfg.span, false, cfg.ref.argv(interval, s, true), 1)
				} else {
					fmt.Fprintf(cfg.out, "round %d: vkwatch, %s\n", round+1, c.name)
					vk, err = measureVKWatch(ctx, cfg, s, cfg.span, c.pty, args)
					rssMax = max(rssMax, vk.rssMax)
				}
				return err
			}
			if err := alternate(round, runRef, runVK); err != nil {
				return checks, rssMax, fmt.Errorf("%s: %w", c.name, err)
			}
			ref := refRuns[key]
			who := "vkwatch"
			if c.nextTick {
				who = "-n"
			}
			fmt.Fprintf(cfg.out, "  ratio %.3f: %s %.2f%%, reference %.2f%% of a core\n", vk.cpu/ref.cpu, who, 100*vk.cpu, 100*ref.cpu)
			pairs[ci] = append(pairs[ci], cpuPair{vk: vk, ref: ref})
		}
	}
	for ci, c := range cpuCases {
		switch {
		case !cfg.runs(c):
		case c.fleet && fleetErr != nil:
			notRun(c, fleetErr.Error())
		case c.limit > 0:
			checks = append(checks, cpuCheck(c, pairs[ci]))
		}
	}
	if cfg.runs(cpuCases[caseRecord]) && cfg.runs(cpuCases[caseQuiet]) {
		checks = append(checks, probeCheck(pairs[caseRecord], pairs[caseQuiet]))
	}
	if cfg.runs(cpuCases[caseOne]) && cfg.runs(cpuCases[caseIdle]) {
		checks = append(checks, floorCheck(pairs[caseOne], pairs[caseIdle], pairs[caseNextTick]))
	}
	return checks, rssMax, nil
}

// fleetCaseInterval is the PING interval of the fleet case (0 when
// --cases leaves it out): the fleet runs once vkwatch takes six
// addresses; its PING budget sets the reference's interval.
func fleetCaseInterval(ctx context.Context, cfg config, srvs []*testServer) (time.Duration, error) {
	if !cfg.runs(cpuCases[len(cpuCases)-1]) {
		return 0, nil
	}
	iv, err := fleetPingInterval(ctx, cfg, srvs[:fleetSize])
	if err != nil {
		fmt.Fprintf(cfg.out, "fleet: %v\n", err)
	} else if iv > 0 {
		fmt.Fprintf(cfg.out, "fleet: vkwatch PINGs each of %d servers every %s; the reference does the same\n", fleetSize, iv)
	}
	return iv, err
}

// runs reports whether --cases selects c.
func (cfg config) runs(c cpuCase) bool { return cfg.cases == nil || cfg.cases[c.short] }

// probeCheck isolates the PING probe: vkwatch without a terminal at 2 ms
// less the same at 100 ms (980 fewer PINGs a second, the sampler and the
// recorder the same), against the reference prober's whole cost.
func probeCheck(rec, quiet []cpuPair) check {
	var probe, ref float64
	var parts []string
	for i := range min(len(rec), len(quiet)) {
		d := rec[i].vk.cpu - quiet[i].vk.cpu
		probe += d
		ref += rec[i].ref.cpu
		parts = append(parts, fmt.Sprintf("%.2f", d/rec[i].ref.cpu))
	}
	c := check{
		Target:  "CPU of the PING probe alone, two servers every 2 ms (vkwatch --record FILE at 2 ms less the same at 100 ms), as a multiple of the reference prober's",
		Verdict: "INFO",
	}
	if ref <= 0 {
		c.Measured = "not measured"
		return c
	}
	n := float64(len(parts))
	c.Measured = fmt.Sprintf("%.2f (rounds: %s): %.2f%% vs %.2f%% of a core; the rest of vkwatch at 100 ms: %.2f%%",
		probe/ref, strings.Join(parts, ", "), 100*probe/n, 100*ref/n, 100*summarize(cpuValues(quiet)).Mean)
	return c
}

// floorCheck splits one server drawing into what it cannot do without
// and the rest, each as a multiple of the reference prober's whole cost in
// the same round: the probe with an idle UI (the idle case: a sample and a
// frame every 10 s), and what sampling and drawing at defaults (a server
// at rest: once a second) add (one less idle). Beside it, when measured, the reference prober in
// its -n mode: whether a probe that wakes once per PING, as vkwatch's
// does, costs less than the reference's two wake-ups. The one-server
// bound leaves sampling and drawing what the floor does not use of it.
func floorCheck(one, idle, nextTick []cpuPair) check {
	c := check{
		Target:  "One server drawing, split: the probe with an idle UI (--interval 10s) and what sampling and drawing at defaults add (a sample and a frame a second at rest), as multiples of the reference prober's",
		Verdict: "INFO",
	}
	n := min(len(one), len(idle))
	if n == 0 {
		c.Measured = "not measured"
		return c
	}
	floor, rest := ratios(idle[:n]), ratios(one[:n])
	for i := range rest {
		rest[i] -= floor[i]
	}
	f, r := summarize(floor), summarize(rest)
	c.Measured = fmt.Sprintf("the probe with an idle UI %.2f (rounds %.2f to %.2f), sampling and drawing %+.2f (%+.2f to %+.2f), n=%d: the %.2f bound leaves sampling and drawing %+.2f",
		f.Mean, f.Min, f.Max, r.Mean, r.Min, r.Max, n, cpuCases[caseOne].limit, cpuCases[caseOne].limit-f.Mean)
	if len(nextTick) > 0 {
		t := summarize(ratios(nextTick))
		c.Measured += fmt.Sprintf("; the reference prober with -n (one wake-up per PING): %.2f (%.2f to %.2f)", t.Mean, t.Min, t.Max)
	}
	return c
}

// ratios is each round's measured CPU as a multiple of the reference's.
func ratios(ps []cpuPair) []float64 {
	var xs []float64
	for _, p := range ps {
		xs = append(xs, p.vk.cpu/p.ref.cpu)
	}
	return xs
}

func cpuValues(ps []cpuPair) []float64 {
	var xs []float64
	for _, p := range ps {
		xs = append(xs, p.vk.cpu)
	}
	return xs
}

func cpuTarget(c cpuCase) string {
	return fmt.Sprintf("CPU, %s: vkwatch <= %.2f x the reference prober's on the same servers", c.name, c.limit)
}

// cpuCheck judges one case: the ratio of vkwatch's total CPU to the
// reference's over all rounds, with the per-round spread beside it.
func cpuCheck(c cpuCase, ps []cpuPair) check {
	var vk, ref float64
	var vkPings, refPings []float64
	for _, p := range ps {
		vk += p.vk.cpu
		ref += p.ref.cpu
		vkPings = append(vkPings, p.vk.pingsPerSec)
		refPings = append(refPings, p.ref.pingsPerSec)
	}
	n := float64(len(ps))
	r := summarize(ratios(ps))
	return check{
		Target: cpuTarget(c),
		Measured: fmt.Sprintf("%.2f (rounds: min %.2f, max %.2f, n=%d): vkwatch %.2f%% vs reference %.2f%% of a core; PINGs/s %.0f vs %.0f",
			vk/ref, r.Min, r.Max, r.N, 100*vk/n, 100*ref/n, summarize(vkPings).Mean, summarize(refPings).Mean),
		Verdict: verdict(vk/ref <= c.limit),
	}
}

// fleetPingInterval starts vkwatch on the fleet without a terminal, reads
// how often it PINGs each server (INFO commandstats over a few seconds) and
// returns that interval, or why vkwatch cannot watch the fleet (a binary
// given with --vkwatch from before fleets took at most two addresses). It
// is measured, not taken from fleet.PingInterval, so that the reference
// probes at the rate the binary under test really uses.
func fleetPingInterval(ctx context.Context, cfg config, srvs []*testServer) (time.Duration, error) {
	argv := append(cfg.vkwatchOn(srvs), "--record", os.DevNull)
	r, err := measure(ctx, cfg, srvs, 5*time.Second, false, argv, 2)
	if err != nil {
		return 0, fmt.Errorf("vkwatch with %d addresses: %w", len(srvs), err)
	}
	if r.pingsPerSec <= 0 {
		return 0, fmt.Errorf("vkwatch with %d addresses sent no PING", len(srvs))
	}
	perServer := r.pingsPerSec / float64(len(srvs))
	return time.Duration(float64(time.Second) / perServer).Round(10 * time.Microsecond), nil
}

// measureVKWatch runs vkwatch on the servers in a pseudo-terminal (or with
// no terminal) and samples its CPU time and RSS for span, after it has
// connected and drawn its first frames.
func measureVKWatch(ctx context.Context, cfg config, srvs []*testServer, span time.Duration, withPTY bool, extra []string) (costRun, error) {
	argv := cfg.vkwatchOn(srvs)
	// vkwatch keeps two connections per server: the sampler and the probe.
	return measure(ctx, cfg, srvs, span, withPTY, append(argv, extra...), 2)
}

// vkwatchOn is the command line of vkwatch watching srvs.
func (cfg config) vkwatchOn(srvs []*testServer) []string {
	argv := []string{cfg.vkwatch}
	for _, s := range srvs {
		argv = append(argv, s.Addr)
	}
	return argv
}

// measure runs argv, in a pseudo-terminal or with no terminal, and samples
// its CPU time and RSS every second for span once it holds conns
// connections to each server (and, in a terminal, has drawn).
func measure(ctx context.Context, cfg config, srvs []*testServer, span time.Duration, withPTY bool, argv []string, conns int64) (costRun, error) {
	bases, err := clientCounts(ctx, srvs)
	if err != nil {
		return costRun{}, err
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
	if err := waitReady(ctx, a, name, withPTY, srvs, bases, conns); err != nil {
		return costRun{}, err
	}
	pings0, err := pingCalls(ctx, srvs)
	if err != nil {
		return costRun{}, err
	}
	points, err := usageEverySecond(ctx, cfg, a, name, srvs, span)
	if err != nil {
		return costRun{}, err
	}
	pings1, err := pingCalls(ctx, srvs)
	if err != nil {
		return costRun{}, err
	}
	r := costOf(points)
	r.pingsPerSec = float64(pings1-pings0) / r.span.Seconds()
	fmt.Fprintf(cfg.out, "  cpu %.2f%% of a core, rss max %.1f MiB, %.0f PINGs/s", 100*r.cpu, mib(r.rssMax), r.pingsPerSec)
	if withPTY {
		fmt.Fprintf(cfg.out, ", %.1f fps, %.1f KiB/s drawn", r.fps, r.bytesPerSec/1024)
	}
	fmt.Fprintln(cfg.out)
	return r, nil
}

// clientCounts is connected_clients of each server.
func clientCounts(ctx context.Context, srvs []*testServer) ([]int64, error) {
	bases := make([]int64, len(srvs))
	for i, s := range srvs {
		n, err := s.clients(ctx)
		if err != nil {
			return nil, err
		}
		bases[i] = n
	}
	return bases, nil
}

// waitReady waits until a holds conns more connections to each server
// than bases and, in a terminal, has drawn twice; an exit of a's ends the
// wait with its words.
func waitReady(ctx context.Context, a *attached, name string, withPTY bool, srvs []*testServer, bases []int64, conns int64) error {
	exitErr := func() error {
		if out := a.output(); !withPTY && out != "" {
			return fmt.Errorf("%s %w (%v): %s", name, errExited, a.err, firstLine(out))
		}
		return fmt.Errorf("%s %w: %v", name, errExited, a.err)
	}
	for i, s := range srvs {
		if err := waitUntil(ctx, fmt.Sprintf("%d clients on %s", bases[i]+conns, s.Addr), 15*time.Second, func() (bool, error) {
			if a.exited() {
				return false, exitErr()
			}
			c, err := s.clients(ctx)
			return c >= bases[i]+conns, err
		}); err != nil {
			return err
		}
	}
	return waitUntil(ctx, name+" drawing", 15*time.Second, func() (bool, error) {
		if a.exited() {
			return false, exitErr()
		}
		return !withPTY || a.frames.Load() >= 2, nil
	})
}

// usagePoint is one reading of a measured run: its own usage, each
// server's, and what it had drawn so far.
type usagePoint struct {
	self    usage
	servers []usage
	frames  int64
	bytes   int64
}

func readPoint(a *attached, srvs []*testServer) (usagePoint, error) {
	p := usagePoint{frames: a.frames.Load(), bytes: a.bytes.Load()}
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

// usageEverySecond reads a's usage every second over span, printing a
// line every 10 s (every minute over a span of 5 minutes or more).
func usageEverySecond(ctx context.Context, cfg config, a *attached, name string, srvs []*testServer, span time.Duration) ([]usagePoint, error) {
	first, err := readPoint(a, srvs)
	if err != nil {
		return nil, err
	}
	points := []usagePoint{first}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	report := 10 * time.Second
	if span >= 5*time.Minute {
		report = time.Minute
	}
	for time.Since(first.self.at) < span {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		}
		if a.exited() {
			return nil, fmt.Errorf("%s exited during the run: %v", name, a.err)
		}
		p, err := readPoint(a, srvs)
		if err != nil {
			return nil, err
		}
		points = append(points, p)
		if el := p.self.at.Sub(first.self.at); el.Round(time.Second)%report == 0 && el.Round(time.Second) < span {
			fmt.Fprintf(cfg.out, "  %6s  cpu %.2f%%  rss %.1f MiB  frames %d\n", el.Round(time.Second),
				100*cpuShare(first.self, p.self), mib(p.self.rss), p.frames-first.frames)
		}
	}
	return points, nil
}

// costOf is what the points of a run say, but its PINGs.
func costOf(points []usagePoint) costRun {
	first, last := points[0], points[len(points)-1]
	wall := last.self.at.Sub(first.self.at).Seconds()
	r := costRun{
		span:        last.self.at.Sub(first.self.at),
		cpu:         cpuShare(first.self, last.self),
		fps:         float64(last.frames-first.frames) / wall,
		bytesPerSec: float64(last.bytes-first.bytes) / wall,
	}
	for i := range first.servers {
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
	return r
}

// pingCalls is the number of PINGs the servers have executed, all together
// (INFO commandstats).
func pingCalls(ctx context.Context, srvs []*testServer) (int64, error) {
	var sum int64
	for _, s := range srvs {
		text, err := s.admin.Info(ctx, "commandstats").Result()
		if err != nil {
			return 0, err
		}
		sum += parsePingCalls(text)
	}
	return sum, nil
}

// parsePingCalls reads cmdstat_ping's calls from INFO commandstats (0 when
// no PING ran yet).
func parsePingCalls(text string) int64 {
	for _, l := range strings.Split(text, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(l), "cmdstat_ping:calls=")
		if !ok {
			continue
		}
		var n int64
		for _, ch := range rest {
			if ch < '0' || ch > '9' {
				break
			}
			n = 10*n + int64(ch-'0')
		}
		return n
	}
	return 0
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
