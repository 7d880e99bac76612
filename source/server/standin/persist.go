package standin

import (
	"fmt"
	"slices"
	"strconv"
	"time"
)

const (
	pageSize = 4096
	// clonePool is the most the forkless save clones of values a writer
	// replaces before the thread reaches them (values of cloneMax bytes
	// or less); past it, such a writer waits too.
	clonePool = 1 << 20
	cloneMax  = 512
	// keyOverhead is what the stand-in counts a key for beside its name
	// and value (the dict entry and objects), and infraPerKey the bytes
	// forkless-infrastructure-enabled adds to each key.
	keyOverhead = 56
	infraPerKey = 4
	baseUsed    = 900 << 10
	rssOverUsed = 2 << 20
	// forkUsec is the stand-in's fork pause (latest_fork_usec).
	forkUsec = 1500
	// aofCOW is what an AOF rewrite's child copies here.
	aofCOW = 10 << 20
)

// state is the stand-in server: its data, its settings and its saves.
// Every field is guarded by Server.mu.
type state struct {
	port      int
	wallStart time.Time     // the server's clock at start (whole seconds)
	now       time.Duration // the stand-in's time since start (Advance)
	forceFork bool

	dbs      [16]map[string]string
	cfg      map[string]string
	dirty    int64 // rdb_changes_since_last_save
	commands int64
	clients  int
	blocked  int
	samples  int // INFO replies with the persistence section
	accepted int // connections accepted
	unknown  []string
	// saveMethods are the methods of the BGSAVEs started, in order.
	saveMethods []string

	rdbSaves, totalForks, forkUsec       int64
	lastSaveTime, lastBgTime, lastCOW    int64
	lastStatus, lastType                 string
	aofScheduled, aofRunning             bool
	aofRewrites, aofLastTime, aofLastCOW int64
	aofStart                             time.Duration
	bgsaveScheduled                      bool

	save *save
	// replica is the replica a sync serves ("ip:port"), and its state.
	replica, replicaState string
}

// save is the RDB job running: a BGSAVE (fork or forkless) or a forkless
// full sync.
type save struct {
	method string // fork, forkless
	sync   bool   // a replica's full sync, no BGSAVE
	start  time.Duration
	keys   []dbKey // the dataset as it began, in the order it is written
	pos    int     // keys written by the save thread (its live count)
	// stored is keys processed as INFO shows it, storedAt when the
	// thread last stored it (at most once a second).
	stored   int
	storedAt time.Duration
	tail     bool // every key written: the file is being written
	// cancelling: BGSAVE CANCEL answered, the thread not stopped yet.
	cancelling bool
	dirtyStart int64
	// held are the keys of the dataset as it began that the thread has
	// not written yet; wake, the writers waiting for one; cloned, the
	// bytes cloned of one a writer replaced.
	held            map[dbKey]bool
	wake            map[dbKey]chan struct{}
	cloned          map[dbKey]int
	pool            int
	cow             int64 // a fork child's copy-on-write, cowShown as INFO has it
	cowShown, cowAt int64
}

type dbKey struct {
	db  int
	key string
}

func (st *state) init(opts Options, port int) {
	st.port = port
	st.wallStart = time.Now().Truncate(time.Second)
	st.forceFork = opts.ModuleForcesFork
	for i := range st.dbs {
		st.dbs[i] = map[string]string{}
	}
	st.cfg = map[string]string{}
	for k, v := range configDefaults {
		st.cfg[k] = v
	}
	if opts.ForklessInfra {
		st.cfg["forkless-infrastructure-enabled"] = "yes"
	}
	if opts.Method != "" {
		st.cfg["bgsave-default-method"] = opts.Method
	}
	st.lastSaveTime = st.wallStart.Unix()
	st.lastBgTime, st.aofLastTime = -1, -1
	st.lastStatus, st.lastType = "ok", "none"
}

// wallSec is the server's clock in unix seconds.
func (st *state) wallSec() int64 { return st.wallStart.Add(st.now).Unix() }

func (st *state) keyCount() int {
	n := 0
	for _, db := range st.dbs {
		n += len(db)
	}
	return n
}

func (st *state) datasetBytes() int64 {
	var n int64
	for _, db := range st.dbs {
		for k, v := range db {
			n += int64(len(k) + len(v) + keyOverhead)
		}
	}
	return n
}

func (st *state) usedMemory() int64 {
	used := baseUsed + st.datasetBytes()
	if st.cfg["forkless-infrastructure-enabled"] == "yes" {
		used += int64(infraPerKey * st.keyCount())
	}
	if sv := st.save; sv != nil {
		used += int64(sv.pool)
	}
	return used
}

// bgsave starts a BGSAVE, or schedules one behind an AOF rewrite.
func (st *state) bgsave(schedule bool) reply {
	switch {
	case st.save != nil:
		return errReply("ERR Background save already in progress")
	case st.aofRunning && schedule:
		st.bgsaveScheduled = true
		return status("Background saving scheduled")
	case st.aofRunning:
		return errReply("ERR Another child process is active (AOF?): can't BGSAVE right now. " +
			"Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible.")
	}
	method := st.cfg["bgsave-default-method"]
	if st.forceFork {
		method = "fork" // a module that cannot save forklessly
	}
	st.begin(method, false)
	return status("Background saving started")
}

// begin starts an RDB job. A BGSAVE counts in rdb_saves as it starts,
// before any key (a fork one as it forks); a sync does not count.
func (st *state) begin(method string, sync bool) {
	sv := &save{method: method, sync: sync, start: st.now, storedAt: st.now, dirtyStart: st.dirty,
		held: map[dbKey]bool{}, wake: map[dbKey]chan struct{}{}, cloned: map[dbKey]int{}}
	for db := range st.dbs {
		for k := range st.dbs[db] {
			sv.keys = append(sv.keys, dbKey{db, k})
			sv.held[dbKey{db, k}] = true
		}
	}
	slices.SortFunc(sv.keys, func(a, b dbKey) int {
		if a.db != b.db {
			return a.db - b.db
		}
		return compare(a.key, b.key)
	})
	if !sync {
		st.rdbSaves++
		st.saveMethods = append(st.saveMethods, method)
	}
	if method == "fork" {
		st.totalForks++
		st.forkUsec = forkUsec
	}
	st.save = sv
}

func compare(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// holds says whether a write of key (whose value is old) must wait for
// the forkless save thread, and returns what to wait on; nil when it may
// go on (no forkless job, the key written already, or its old value
// cloned).
func (st *state) holds(db int, key, old string) <-chan struct{} {
	sv := st.save
	k := dbKey{db, key}
	if sv == nil || sv.method != "forkless" || !sv.held[k] {
		return nil
	}
	if _, done := sv.cloned[k]; done {
		return nil
	}
	if len(old) <= cloneMax && sv.pool+len(old) <= clonePool {
		sv.cloned[k] = len(old)
		sv.pool += len(old)
		return nil
	}
	ch, ok := sv.wake[k]
	if !ok {
		ch = make(chan struct{})
		sv.wake[k] = ch
	}
	return ch
}

// step has the save thread write n more keys: a writer waiting for one of
// them goes on, a clone of one is freed. After the last key the save is
// in its tail: the file is written (Finish ends it).
func (st *state) step(n int) {
	sv := st.save
	for ; n > 0 && sv.pos < len(sv.keys); n-- {
		k := sv.keys[sv.pos]
		sv.pos++
		delete(sv.held, k)
		sv.pool -= sv.cloned[k]
		delete(sv.cloned, k)
		if ch, ok := sv.wake[k]; ok {
			close(ch)
			delete(sv.wake, k)
		}
	}
	if sv.pos == len(sv.keys) {
		sv.tail = true
	}
}

// advance moves the stand-in's time on by d: the save thread stores its
// count (at most once a second), a fork child's copy-on-write is
// refreshed (about once a second).
func (st *state) advance(d time.Duration) {
	st.now += d
	sv := st.save
	if sv == nil {
		return
	}
	if st.now-sv.storedAt >= time.Second {
		sv.stored, sv.storedAt = sv.pos, st.now
		sv.cowShown, sv.cowAt = sv.cow, int64(st.now/time.Second)
	}
}

// finish ends the running job as the server does a finished one.
func (st *state) finish(ok bool) {
	sv := st.save
	st.release()
	st.lastBgTime = int64((st.now - sv.start) / time.Second)
	switch {
	case sv.sync:
		// A sync is no BGSAVE: only the duration is kept.
		st.replicaState = "online"
	case ok:
		st.lastStatus, st.lastType = "ok", sv.method
		st.lastSaveTime = st.wallSec()
		st.dirty -= sv.dirtyStart
		if sv.method == "fork" {
			st.lastCOW = sv.cow
		}
	default:
		st.lastStatus, st.lastType = "err", sv.method
	}
	st.after()
}

// cancel is BGSAVE CANCEL. A forkless save answers at once and its thread
// stops later (SettleCancel): rdb_bgsave_in_progress stays 1 meanwhile. A
// cancel sets rdb_last_bgsave_time_sec only: no status, no type.
func (st *state) cancel() reply {
	switch {
	case st.save != nil && !st.save.sync:
		if st.save.method == "fork" {
			st.stopCancelled()
		} else {
			st.save.cancelling = true
		}
		return status("Background saving cancelled")
	case st.bgsaveScheduled:
		st.bgsaveScheduled = false
		return status("Scheduled background saving cancelled")
	}
	return errReply("ERR Background saving is currently not in progress or scheduled")
}

func (st *state) stopCancelled() {
	sv := st.save
	st.release()
	st.lastBgTime = int64((st.now - sv.start) / time.Second)
	st.after()
}

// abort is FLUSHALL or FLUSHDB during a save: it stops without failing,
// status, type, lastsave and the change counter as they were.
func (st *state) abort() {
	st.release()
	st.after()
}

// release lets every waiting writer go and ends the job.
func (st *state) release() {
	if sv := st.save; sv != nil {
		for k, ch := range sv.wake {
			close(ch)
			delete(sv.wake, k)
		}
	}
	st.save = nil
}

// releaseAll is release for Close.
func (st *state) releaseAll() { st.release() }

// after starts what waited for the RDB job: an AOF rewrite scheduled
// behind it.
func (st *state) after() {
	if st.aofScheduled {
		st.aofScheduled = false
		st.startAOF()
	}
}

// bgrewriteaof is BGREWRITEAOF: it forks, or, while an RDB job runs
// (forkless too), waits scheduled until it ends.
func (st *state) bgrewriteaof() reply {
	switch {
	case st.aofRunning:
		return errReply("ERR Background append only file rewriting already in progress")
	case st.save != nil:
		st.aofScheduled = true
		return status("Background append only file rewriting scheduled")
	}
	st.startAOF()
	return status("Background append only file rewriting started")
}

func (st *state) startAOF() {
	st.aofRunning, st.aofStart = true, st.now
	st.aofRewrites++
	st.totalForks++
	st.forkUsec = forkUsec
}

// View is what a test sees of the stand-in.
type View struct {
	Saving     bool   // an RDB job runs (rdb_bgsave_in_progress 1)
	Method     string // its method; the last one's when none runs
	Sync       bool
	Keys       int // its keys total
	Written    int // keys its thread has written
	Tail       bool
	Cancelling bool
	Blocked    int // clients waiting for the save thread
	Samples    int // INFO replies with the persistence section so far
	Commands   int64
	Accepted   int // connections accepted so far
	RDBSaves   int64
	AOFRunning bool
	AOFWaiting bool
	Dirty      int64
}

func (st *state) view() View {
	v := View{Blocked: st.blocked, Samples: st.samples, Commands: st.commands, Accepted: st.accepted, RDBSaves: st.rdbSaves,
		AOFRunning: st.aofRunning, AOFWaiting: st.aofScheduled, Dirty: st.dirty, Method: st.lastType}
	if sv := st.save; sv != nil {
		v.Saving, v.Method, v.Sync, v.Keys, v.Written = true, sv.method, sv.sync, len(sv.keys), sv.pos
		v.Tail, v.Cancelling = sv.tail, sv.cancelling
	}
	return v
}

// The test's hands on the stand-in.

// Load stores n keys "prefix<i>" of size bytes in database 0, as a
// preload would (counted as changes).
func (s *Server) Load(prefix string, n, size int) {
	s.locked(func(st *state) {
		v := string(make([]byte, size))
		for i := range n {
			st.dbs[0][prefix+strconv.Itoa(i)] = v
		}
		st.dirty += int64(n)
	})
}

// Advance moves the stand-in's time on by d.
func (s *Server) Advance(d time.Duration) { s.locked(func(st *state) { st.advance(d) }) }

// Step has the running job's thread (or child) write n more keys.
func (s *Server) Step(n int) { s.running(func(st *state) { st.step(n) }) }

// Finish ends the running job: the file written, the save ok.
func (s *Server) Finish() { s.running(func(st *state) { st.finish(true) }) }

// Fail ends the running job as failed (rdb_last_bgsave_status err).
func (s *Server) Fail() { s.running(func(st *state) { st.finish(false) }) }

// SettleCancel is the forkless save thread noticing a BGSAVE CANCEL that
// was answered earlier: the save stops now.
func (s *Server) SettleCancel() {
	s.running(func(st *state) {
		if !st.save.cancelling {
			panic("stand-in: SettleCancel without a BGSAVE CANCEL")
		}
		st.stopCancelled()
	})
}

// StartSync starts a replica's full sync served without a fork, for the
// replica at addr ("ip:port"): in progress, type forkless, no key total,
// rdb_saves not counted.
func (s *Server) StartSync(addr string) {
	s.locked(func(st *state) {
		if st.save != nil {
			panic("stand-in: a sync while a save runs")
		}
		st.replica, st.replicaState = addr, "wait_bgsave"
		st.begin("forkless", true)
	})
}

// FinishAOFRewrite ends the running AOF rewrite, ok.
func (s *Server) FinishAOFRewrite() {
	s.locked(func(st *state) {
		if !st.aofRunning {
			panic("stand-in: no AOF rewrite runs")
		}
		st.aofRunning = false
		st.aofLastTime = int64((st.now - st.aofStart) / time.Second)
		st.aofLastCOW = aofCOW
		if st.bgsaveScheduled {
			st.bgsaveScheduled = false
			st.begin(st.cfg["bgsave-default-method"], false)
		}
	})
}

// running is locked for a control that needs a job running.
func (s *Server) running(f func(st *state)) {
	s.locked(func(st *state) {
		if st.save == nil {
			panic(fmt.Sprintf("stand-in: no save runs (%+v)", st.view()))
		}
		f(st)
	})
}
