//go:build linux

package main

// A hostile peer: a small RESP server that answers everything vkwatch
// sends (HELLO, CLIENT, PING, INFO, CONFIG GET, CLUSTER SHARDS, BGSAVE,
// DBSIZE, SET...) with escape sequences in every string it can: versions,
// roles, replica lines, hostnames, node ids, statuses, replies and errors.
// This is the one place a fake server is right: the claim is about vkwatch
// against any peer, a compromised one included, and no real server says
// these things.

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Sequences a hostile peer sends. Each is something a terminal acts on:
// OSC 0 sets the title, OSC 52 writes the clipboard, the CSI sets an
// unusual colour no vkwatch style uses, the C1 CSI (U+009B) clears the
// screen, BEL rings.
const (
	oscTitle  = "\x1b]0;PWNED\x07"
	oscClip   = "\x1b]52;c;cHduZWQ=\x07"
	csiColour = "\x1b[31;7;5m"
	c1Clear   = "\u009b2J"
	// hostile is all of them in one string.
	hostile = oscTitle + oscClip + csiColour + c1Clear + "red"
)

// injected are byte strings that must never reach vkwatch's output: the
// sequences themselves (vkwatch's own output has other OSCs, such as
// termenv's background query, so the check is for these exactly).
var injected = []string{oscTitle, "\x1b]0;", "\x1b]52;", csiColour, "\xc2\x9b", "\xc2\x9d", "\x07PWNED", "PWNED\x07"}

// hostilePeer is the fake server. cluster makes it a one-node cluster
// (cluster_enabled:1, CLUSTER SHARDS naming itself with a hostile id and
// hostname); saveOK makes BGSAVE start a (pretend) save that lasts
// saveFor, else BGSAVE is refused with a hostile error.
type hostilePeer struct {
	t       *testing.T
	ln      net.Listener
	Addr    string
	Port    int
	cluster bool
	saveOK  bool
	saveFor time.Duration

	mu        sync.Mutex
	saveUntil time.Time
	saves     int
	commands  map[string]int
}

func startHostilePeer(t *testing.T, cluster, saveOK bool) *hostilePeer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &hostilePeer{t: t, ln: ln, Addr: ln.Addr().String(), Port: ln.Addr().(*net.TCPAddr).Port,
		cluster: cluster, saveOK: saveOK, saveFor: 1500 * time.Millisecond, commands: map[string]int{}}
	var wg sync.WaitGroup
	var conns sync.Map
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Store(c, true)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer conns.Delete(c)
				p.serve(c)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		conns.Range(func(k, _ any) bool { k.(net.Conn).Close(); return true })
		wg.Wait()
	})
	return p
}

// count returns how many times the peer was sent cmd (upper case).
func (p *hostilePeer) count(cmd string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.commands[cmd]
}

func (p *hostilePeer) serve(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	w := bufio.NewWriter(c)
	for {
		args, err := readCommand(r)
		if err != nil {
			return
		}
		if len(args) == 0 {
			continue
		}
		p.answer(w, args)
		if r.Buffered() == 0 {
			if w.Flush() != nil {
				return
			}
		}
	}
}

// readCommand reads one RESP array of bulk strings, or an inline command.
func readCommand(r *bufio.Reader) ([]string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	line = strings.TrimRight(line, "\r\n")
	if !strings.HasPrefix(line, "*") {
		return strings.Fields(line), nil
	}
	n, err := strconv.Atoi(line[1:])
	if err != nil || n < 0 || n > 1024 {
		return nil, fmt.Errorf("bad array %q", line)
	}
	args := make([]string, 0, n)
	for range n {
		h, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		size, err := strconv.Atoi(strings.TrimRight(h, "\r\n")[1:])
		if err != nil || size < 0 || size > 1<<20 {
			return nil, fmt.Errorf("bad bulk %q", h)
		}
		b := make([]byte, size+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		args = append(args, string(b[:size]))
	}
	return args, nil
}

func bulk(w *bufio.Writer, s string) { fmt.Fprintf(w, "$%d\r\n%s\r\n", len(s), s) }

// simple writes a status or an error line: RESP forbids CR and LF there,
// not escapes.
func simple(w *bufio.Writer, kind byte, s string) {
	w.WriteByte(kind)
	w.WriteString(s)
	w.WriteString("\r\n")
}

func (p *hostilePeer) answer(w *bufio.Writer, args []string) {
	cmd := strings.ToUpper(args[0])
	p.mu.Lock()
	p.commands[cmd]++
	p.mu.Unlock()
	switch cmd {
	case "HELLO":
		simple(w, '-', "NOPROTO "+hostile)
	case "AUTH":
		simple(w, '-', "WRONGPASS "+hostile)
	case "CLIENT", "SELECT", "SET":
		simple(w, '+', "OK")
	case "PING":
		simple(w, '+', "PONG")
	case "DBSIZE":
		w.WriteString(":100000\r\n")
	case "EXISTS":
		fmt.Fprintf(w, ":%d\r\n", len(args)-1) // the writers' keyspace is all there
	case "GET":
		w.WriteString("$-1\r\n")
	case "INFO":
		bulk(w, p.info())
	case "CONFIG":
		p.config(w, args)
	case "CLUSTER":
		if p.cluster && len(args) > 1 && strings.EqualFold(args[1], "SHARDS") {
			p.shards(w)
			return
		}
		simple(w, '-', "ERR "+hostile)
	case "BGSAVE", "BGREWRITEAOF":
		if !p.saveOK {
			simple(w, '-', "ERR refused "+hostile)
			return
		}
		p.mu.Lock()
		p.saveUntil = time.Now().Add(p.saveFor)
		p.saves++
		p.mu.Unlock()
		simple(w, '+', "Background "+hostile+" saving started")
	default:
		simple(w, '-', "ERR unknown command "+hostile)
	}
}

// info is an INFO reply whose every text field is hostile (the version
// keeps a number first, as a compromised server's would), with a replica
// waiting for a full sync and, while a pretend save runs, its progress.
func (p *hostilePeer) info() string {
	p.mu.Lock()
	saving := time.Now().Before(p.saveUntil)
	saves := p.saves
	left := time.Until(p.saveUntil)
	p.mu.Unlock()
	in, state := 0, "online"
	if saving {
		in, state = 1, "wait_bgsave"
	}
	processed := int64(0)
	if saving {
		processed = 100000 - int64(100000*left/p.saveFor)
	}
	clusterOn := 0
	if p.cluster {
		clusterOn = 1
	}
	lines := []string{
		"# Server",
		"redis_version:7.0.15" + hostile,
		"server_name:" + hostile,
		"process_id:2147483000",
		"uptime_in_seconds:1000",
		"server_time_usec:" + strconv.FormatInt(time.Now().UnixMicro(), 10),
		"# Replication",
		"role:master" + hostile,
		"connected_slaves:1",
		"slave0:ip=" + hostile + ",port=6380,state=" + state + ",offset=0,lag=0",
		"# Memory",
		"used_memory:104857600",
		"used_memory_rss:115343360",
		"maxmemory:0",
		"# Stats",
		"total_commands_processed:" + strconv.FormatInt(time.Now().UnixMilli()%1000000, 10),
		"instantaneous_ops_per_sec:10",
		"latest_fork_usec:300",
		"total_forks:" + strconv.Itoa(saves),
		"# Persistence",
		"loading:0",
		"rdb_bgsave_in_progress:" + strconv.Itoa(in),
		"rdb_current_bgsave_time_sec:" + map[bool]string{true: "1", false: "-1"}[saving],
		"rdb_last_bgsave_time_sec:1",
		"rdb_last_bgsave_status:" + hostile,
		"rdb_saves:" + strconv.Itoa(saves),
		"rdb_changes_since_last_save:5",
		"rdb_last_save_time:" + strconv.FormatInt(time.Now().Unix(), 10),
		"rdb_last_cow_size:1048576",
		"aof_enabled:0",
		"aof_rewrite_in_progress:0",
		"aof_rewrite_scheduled:0",
		"aof_last_bgrewrite_status:" + hostile,
		"aof_last_cow_size:0",
		"current_cow_size:0",
		"current_save_keys_processed:" + strconv.FormatInt(processed, 10),
		"current_save_keys_total:100000",
		"# Cluster",
		"cluster_enabled:" + strconv.Itoa(clusterOn),
	}
	return strings.Join(lines, "\r\n") + "\r\n"
}

// config answers CONFIG GET name with a hostile value for the text
// settings and a plausible one where vkwatch reads a number or yes/no.
func (p *hostilePeer) config(w *bufio.Writer, args []string) {
	if len(args) < 3 || !strings.EqualFold(args[1], "GET") {
		simple(w, '-', "ERR "+hostile)
		return
	}
	values := map[string]string{
		"bgsave-default-method": "fork" + hostile, "save": "3600 1" + hostile,
		"repl-diskless-sync": "yes", "rdb-key-save-delay": "0",
		"auto-aof-rewrite-percentage": "100", "auto-aof-rewrite-min-size": "67108864",
	}
	var pairs []string
	for _, name := range args[2:] {
		if v, ok := values[name]; ok {
			pairs = append(pairs, name, v)
		}
	}
	fmt.Fprintf(w, "*%d\r\n", len(pairs))
	for _, s := range pairs {
		bulk(w, s)
	}
}

// shards is CLUSTER SHARDS for a one-node cluster: this peer, under a
// hostile id and hostname (its endpoint stays its own address, so vkwatch
// can connect to it).
func (p *hostilePeer) shards(w *bufio.Writer) {
	w.WriteString("*1\r\n*4\r\n")
	bulk(w, "slots")
	w.WriteString("*2\r\n:0\r\n:16383\r\n")
	bulk(w, "nodes")
	w.WriteString("*1\r\n*14\r\n")
	for _, kv := range [][2]string{
		{"id", "0123456789abcdef" + oscTitle + csiColour}, {"port", ""}, {"ip", "127.0.0.1"},
		{"endpoint", "127.0.0.1"}, {"hostname", hostile}, {"role", "master"}, {"health", "online"},
	} {
		bulk(w, kv[0])
		if kv[0] == "port" {
			fmt.Fprintf(w, ":%d\r\n", p.Port)
			continue
		}
		bulk(w, kv[1])
	}
}

// checkInertOutput fails when out holds a sequence the peer injected.
func checkInertOutput(t *testing.T, what, out string) {
	t.Helper()
	for _, seq := range injected {
		if i := strings.Index(out, seq); i >= 0 {
			t.Errorf("%s holds the injected %q at byte %d: ...%q...", what, seq, i, out[max(i-60, 0):min(i+60, len(out))])
		}
	}
}
