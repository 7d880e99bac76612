package standin

import (
	"path"
	"slices"
	"strconv"
	"strings"
)

// command runs one command on the state (the lock held). A write to a key
// the save thread holds returns the channel to wait on before running it
// again: the client is blocked meanwhile.
//
// total_commands_processed counts the commands run; one refused with an
// error is not counted (as vkwatch assumes of a real server: see
// watch.ownCounter).
func (st *state) command(cl *client, args []string) (reply, <-chan struct{}) {
	var r reply
	var wait <-chan struct{}
	switch name := strings.ToUpper(args[0]); name {
	case "SET":
		r, wait = st.set(cl, args)
	case "INFO":
		r = st.info(args[1:])
	case "CONFIG":
		r = st.config(args)
	case "BGSAVE":
		r = st.bgsaveCommand(args)
	default:
		r = st.simple(cl, name, args)
	}
	if wait == nil && !r.isError() {
		st.commands++
	}
	return r, wait
}

// simple runs the commands that never block and need no more than a
// line or two.
func (st *state) simple(cl *client, name string, args []string) reply {
	switch {
	case name == "PING" && len(args) == 1:
		return status("PONG")
	case name == "PING" && len(args) == 2:
		return bulk(args[1])
	case name == "HELLO":
		// No RESP3 here: go-redis falls back to RESP2, as it does with
		// any server that refuses HELLO.
		return errReply("NOPROTO sorry, this protocol version is not supported")
	case name == "CLIENT" && len(args) >= 2:
		switch strings.ToUpper(args[1]) {
		case "SETINFO", "SETNAME":
			return ok()
		}
	case name == "SELECT" && len(args) == 2:
		db, err := strconv.Atoi(args[1])
		if err != nil || db < 0 || db >= len(st.dbs) {
			return errReply("ERR DB index is out of range")
		}
		cl.db = db
		return ok()
	case name == "QUIT":
		cl.quit = true
		return ok()
	case name == "GET" && len(args) == 2:
		// Reads never wait for the save thread.
		if v, ok := st.dbs[cl.db][args[1]]; ok {
			return bulk(v)
		}
		return nilBulk()
	case name == "EXISTS" && len(args) >= 2:
		n := 0
		for _, k := range args[1:] {
			if _, ok := st.dbs[cl.db][k]; ok {
				n++
			}
		}
		return integer(int64(n))
	case name == "DBSIZE" && len(args) == 1:
		return integer(int64(len(st.dbs[cl.db])))
	case name == "FLUSHALL" || name == "FLUSHDB":
		return st.flush(cl, name == "FLUSHALL")
	case name == "BGREWRITEAOF" && len(args) == 1:
		return st.bgrewriteaof()
	case name == "SLOWLOG" && len(args) >= 2 && strings.EqualFold(args[1], "GET"),
		name == "LATENCY" && len(args) == 2 && strings.EqualFold(args[1], "LATEST"):
		// What vkwatch reads after a PING spike. The stand-in times no
		// command and no event of its own: its logs are empty, as a
		// real server's are when nothing reached their thresholds.
		return array()
	}
	if known := []string{"PING", "CLIENT", "SELECT", "GET", "EXISTS", "DBSIZE", "BGREWRITEAOF", "SLOWLOG", "LATENCY"}; slices.Contains(known, name) {
		return errReply("ERR wrong number of arguments for '" + strings.ToLower(name) + "' command")
	}
	st.unknown = append(st.unknown, strings.Join(args, " "))
	return errReply("ERR unknown command '" + args[0] + "', with args beginning with: ")
}

// set is SET key value [XX]. During a forkless save a write to a key the
// save thread has not written yet is held until it has: a value of 512
// bytes or less is cloned instead, from a pool of at most 1 MiB, and the
// write goes on at once.
func (st *state) set(cl *client, args []string) (reply, <-chan struct{}) {
	if len(args) != 3 && (len(args) != 4 || !strings.EqualFold(args[3], "XX")) {
		if len(args) < 3 {
			return errReply("ERR wrong number of arguments for 'set' command"), nil
		}
		return errReply("ERR syntax error"), nil
	}
	db := st.dbs[cl.db]
	old, exists := db[args[1]]
	if len(args) == 4 && !exists {
		return nilBulk(), nil
	}
	if exists {
		if wait := st.holds(cl.db, args[1], old); wait != nil {
			return reply{}, wait
		}
	}
	db[args[1]] = args[2]
	st.dirty++
	if sv := st.save; sv != nil && sv.method == "fork" {
		// The parent writes a page the child still shares: copied.
		sv.cow = min(sv.cow+pageSize, st.datasetBytes())
	}
	return ok(), nil
}

// flush is FLUSHALL / FLUSHDB: the keys go, and a running save (fork or
// forkless) is aborted without failing it (abort).
func (st *state) flush(cl *client, all bool) reply {
	removed := 0
	for i := range st.dbs {
		if all || i == cl.db {
			removed += len(st.dbs[i])
			st.dbs[i] = map[string]string{}
		}
	}
	st.dirty += int64(removed)
	if st.save != nil {
		st.abort()
	}
	return ok()
}

// The configuration: the settings vkwatch reads, with their defaults.
var configDefaults = map[string]string{
	"bgsave-default-method":           "fork",
	"forkless-infrastructure-enabled": "no",
	"rdb-key-save-delay":              "0",
	"repl-diskless-sync":              "yes",
	"save":                            "",
	"appendonly":                      "no",
	"auto-aof-rewrite-percentage":     "100",
	"auto-aof-rewrite-min-size":       "67108864",
	"client-output-buffer-limit":      "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60",
	"disable-thp":                     "yes",
	"maxmemory":                       "0",
	"dbfilename":                      "dump.rdb",
	"slowlog-log-slower-than":         "10000",
	"latency-monitor-threshold":       "0",
	"appendfsync":                     "everysec",
}

// config is CONFIG GET pattern... and CONFIG SET name value.
func (st *state) config(args []string) reply {
	if len(args) < 2 {
		return errReply("ERR wrong number of arguments for 'config' command")
	}
	switch sub := strings.ToUpper(args[1]); {
	case sub == "GET" && len(args) >= 3:
		var out []string
		names := make([]string, 0, len(st.cfg))
		for n := range st.cfg {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			for _, p := range args[2:] {
				if m, _ := path.Match(strings.ToLower(p), n); m {
					out = append(out, n, st.cfg[n])
					break
				}
			}
		}
		return array(out...)
	case sub == "SET" && len(args) == 4:
		return st.configSet(strings.ToLower(args[2]), args[3])
	}
	return errReply("ERR unknown subcommand or wrong number of arguments for '" + args[1] + "'")
}

// configSet sets one setting, with the real server's refusals.
func (st *state) configSet(name, value string) reply {
	failed := func(why string) reply {
		return errReply("ERR CONFIG SET failed (possibly related to argument '" + name + "') - " + why)
	}
	if _, ok := st.cfg[name]; !ok {
		return errReply("ERR Unknown option or number of arguments for CONFIG SET - '" + name + "'")
	}
	switch name {
	case "forkless-infrastructure-enabled":
		return failed("can't set immutable config")
	case "bgsave-default-method":
		value = strings.ToLower(value)
		switch {
		case value != "fork" && value != "forkless":
			return failed("argument(s) must be one of the following: fork, forkless")
		case value == "forkless" && st.cfg["forkless-infrastructure-enabled"] != "yes":
			return failed("'forkless' can only be selected when the server was started with 'forkless-infrastructure-enabled yes'")
		}
	case "rdb-key-save-delay", "maxmemory", "auto-aof-rewrite-percentage", "auto-aof-rewrite-min-size":
		if _, err := strconv.ParseInt(value, 10, 64); err != nil {
			return failed("argument couldn't be parsed into an integer")
		}
	}
	st.cfg[name] = value
	return ok()
}

// bgsaveCommand is BGSAVE [SCHEDULE|CANCEL]: the method is a setting,
// not an argument (anything else is a syntax error).
func (st *state) bgsaveCommand(args []string) reply {
	switch {
	case len(args) == 1:
		return st.bgsave(false)
	case len(args) == 2 && strings.EqualFold(args[1], "SCHEDULE"):
		return st.bgsave(true)
	case len(args) == 2 && strings.EqualFold(args[1], "CANCEL"):
		return st.cancel()
	}
	return errReply("ERR syntax error")
}
