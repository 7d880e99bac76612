package record

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"testing"
	"time"
	"unsafe"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/inert"
)

// The prototype of issue 17: this format's whole sample lines written by
// encoding/json, through struct tags and marshallers, set against this
// package's reflection codec (BenchmarkCodecEncodeTagged beside
// BenchmarkCodecEncodeThis; TestTaggedPrototypeBytes checks the lines are
// byte for byte the codec's).
//
// Tags cannot go on source's types from here, so the prototype mirrors
// them: the tagged* types below have the very layout of source's (checked
// by TestTaggedMirrorsLayout), so a *source.Sample is read as a
// *taggedSample with no copy, as if source's types carried the tags.
// They were generated from fieldsOf (the codec's own key rule) and would
// be, in a switch, the tags of source/types.go. What the tags alone do
// not carry took a marshaller each, and in source the field types of
// their own (for Duration, time.Time, float64 and the replicas array,
// whose JSON encoding/json would otherwise choose):
//
//   - taggedOpt: null, or the value (the one Opt marshaller);
//   - taggedSeconds and taggedMicros: a Duration as exact decimal seconds (_s), or
//     microseconds inside a Latency (_us), where encoding/json writes
//     nanoseconds; an Opt[Duration] is an Opt of one of them;
//   - taggedFloat: shortest 'g' and null when not finite (encoding/json
//     fails the whole line on a NaN, and writes 1e+06 as 1000000);
//   - taggedTime: null for the zero time;
//   - taggedReplicas: the array up to its last non-zero replica.
//
// A delta line (all but one sample in 25 at the default interval, in 500
// at 10 ms) is not JSON of a struct: it is the fields that changed, which
// the writer finds by walking the codec's field table (delta.go), so the
// table and the encoder stay whatever writes whole lines.

type taggedOpt[T any] struct {
	V  T
	OK bool
}

func (o taggedOpt[T]) MarshalJSON() ([]byte, error) {
	if !o.OK {
		return []byte("null"), nil
	}
	if v, ok := any(o.V).(int64); ok {
		return strconv.AppendInt(nil, v, 10), nil // most of them: no reflection
	}
	return json.Marshal(o.V)
}

type taggedSeconds time.Duration

func (d taggedSeconds) MarshalJSON() ([]byte, error) { return appendDecimal(nil, int64(d), 9), nil }

type taggedMicros time.Duration

func (d taggedMicros) MarshalJSON() ([]byte, error) { return appendDecimal(nil, int64(d), 3), nil }

type taggedFloat float64

func (f taggedFloat) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, float64(f), 'g', -1, 64), nil
}

type taggedTime time.Time

func (t taggedTime) MarshalJSON() ([]byte, error) {
	if time.Time(t).IsZero() {
		return []byte("null"), nil
	}
	return json.Marshal(time.Time(t))
}

type taggedReplicas [source.MaxReplicas]taggedReplica

func (r taggedReplicas) MarshalJSON() ([]byte, error) {
	n := len(r)
	for n > 0 && r[n-1] == (taggedReplica{}) {
		n--
	}
	return json.Marshal(r[:n])
}

// taggedEvent is a whole sample event's line.
type taggedEvent struct {
	T      taggedSeconds `json:"t"`
	At     taggedTime    `json:"at"`
	Node   string        `json:"node"`
	Kind   string        `json:"kind"`
	Sample *taggedSample `json:"sample"`
}

// taggedLine writes ev, a sample event, as the prototype does.
func taggedLine(ev source.Event, epoch time.Time) ([]byte, error) {
	line, err := json.Marshal(taggedEvent{
		T:      taggedSeconds(ev.Offset),
		At:     taggedTime(epoch.Add(ev.Offset)),
		Node:   string(ev.Node),
		Kind:   ev.Kind.String(),
		Sample: (*taggedSample)(unsafe.Pointer(ev.Sample)),
	})
	return inert.JSON(line), err
}

// The mirrors, generated from fieldsOf (gofmt'ed).

type taggedInfo struct {
	ServerName            string                 `json:"server_name"`
	Version               string                 `json:"version"`
	ProcessID             taggedOpt[int64]       `json:"process_id"`
	Uptime                taggedOpt[int64]       `json:"uptime"`
	ServerTimeUsec        taggedOpt[int64]       `json:"server_time_usec"`
	Role                  string                 `json:"role"`
	ConnectedReplicas     taggedOpt[int64]       `json:"connected_replicas"`
	Replicas              taggedReplicas         `json:"replicas"`
	NumReplicas           int                    `json:"num_replicas"`
	ReplicasWaitingBGSave int                    `json:"replicas_waiting_bg_save"`
	UsedMemory            taggedOpt[int64]       `json:"used_memory"`
	RSS                   taggedOpt[int64]       `json:"rss"`
	MaxMemory             taggedOpt[int64]       `json:"max_memory"`
	TotalSystemMemory     taggedOpt[int64]       `json:"total_system_memory"`
	MemClientsReplicas    taggedOpt[int64]       `json:"mem_clients_replicas"`
	AllocatorRSS          taggedOpt[int64]       `json:"allocator_rss"`
	TotalCommands         taggedOpt[int64]       `json:"total_commands"`
	InstOps               taggedOpt[int64]       `json:"inst_ops"`
	LatestForkUsec        taggedOpt[int64]       `json:"latest_fork_usec"`
	TotalForks            taggedOpt[int64]       `json:"total_forks"`
	BlockedClients        taggedOpt[int64]       `json:"blocked_clients"`
	Loading               taggedOpt[int64]       `json:"loading"`
	RDBInProgress         taggedOpt[int64]       `json:"rdb_in_progress"`
	RDBCurrentTime        taggedOpt[int64]       `json:"rdb_current_time"`
	RDBLastTime           taggedOpt[int64]       `json:"rdb_last_time"`
	RDBLastStatus         string                 `json:"rdb_last_status"`
	RDBSaves              taggedOpt[int64]       `json:"rdb_saves"`
	RDBChangesSinceSave   taggedOpt[int64]       `json:"rdb_changes_since_save"`
	RDBLastSaveTime       taggedOpt[int64]       `json:"rdb_last_save_time"`
	RDBLastCOW            taggedOpt[int64]       `json:"rdb_last_cow"`
	RDBCurrentType        string                 `json:"rdb_current_type"`
	RDBLastType           string                 `json:"rdb_last_type"`
	ForklessETA           taggedOpt[int64]       `json:"forkless_eta"`
	AOFEnabled            taggedOpt[int64]       `json:"aof_enabled"`
	AOFRewriteInProgress  taggedOpt[int64]       `json:"aof_rewrite_in_progress"`
	AOFRewriteScheduled   taggedOpt[int64]       `json:"aof_rewrite_scheduled"`
	AOFCurrentRewriteTime taggedOpt[int64]       `json:"aof_current_rewrite_time"`
	AOFLastRewriteTime    taggedOpt[int64]       `json:"aof_last_rewrite_time"`
	AOFLastStatus         string                 `json:"aof_last_status"`
	AOFLastCOW            taggedOpt[int64]       `json:"aof_last_cow"`
	AOFRewrites           taggedOpt[int64]       `json:"aof_rewrites"`
	AOFCurrentSize        taggedOpt[int64]       `json:"aof_current_size"`
	AOFBaseSize           taggedOpt[int64]       `json:"aof_base_size"`
	CurrentCOW            taggedOpt[int64]       `json:"current_cow"`
	CurrentCOWAge         taggedOpt[int64]       `json:"current_cow_age"`
	CurrentCOWPeak        taggedOpt[int64]       `json:"current_cow_peak"`
	CurrentForkPerc       taggedOpt[taggedFloat] `json:"current_fork_perc"`
	KeysProcessed         taggedOpt[int64]       `json:"keys_processed"`
	KeysTotal             taggedOpt[int64]       `json:"keys_total"`
	SlotMigrationFork     taggedOpt[int64]       `json:"slot_migration_fork"`
	ClusterEnabled        taggedOpt[int64]       `json:"cluster_enabled"`
}

type taggedSaveConfig struct {
	Method                string            `json:"method"`
	ForklessInfra         taggedOpt[bool]   `json:"forkless_infra"`
	RDBKeySaveDelay       taggedOpt[int64]  `json:"rdb_key_save_delay"`
	ReplDisklessSync      taggedOpt[bool]   `json:"repl_diskless_sync"`
	SaveSchedule          taggedOpt[string] `json:"save_schedule"`
	AutoAOFRewritePerc    taggedOpt[int64]  `json:"auto_aof_rewrite_perc"`
	AutoAOFRewriteMinSize taggedOpt[int64]  `json:"auto_aof_rewrite_min_size"`
	ReplicaBufHard        taggedOpt[int64]  `json:"replica_buf_hard"`
	ReplicaBufSoft        taggedOpt[int64]  `json:"replica_buf_soft"`
	ReplicaBufSoftSecs    taggedOpt[int64]  `json:"replica_buf_soft_secs"`
	DisableTHP            taggedOpt[bool]   `json:"disable_thp"`
	Err                   string            `json:"err"`
}

type taggedLatency struct {
	Count    int64        `json:"count"`
	Min      taggedMicros `json:"min_us"`
	P50      taggedMicros `json:"p50_us"`
	P99      taggedMicros `json:"p99_us"`
	Max      taggedMicros `json:"max_us"`
	InFlight taggedMicros `json:"in_flight_us"`
	Interval taggedMicros `json:"interval_us"`
}

type taggedProcMem struct {
	Cgroup            string           `json:"cgroup"`
	CgroupUsage       taggedOpt[int64] `json:"cgroup_usage"`
	CgroupLimit       taggedOpt[int64] `json:"cgroup_limit"`
	RSS               taggedOpt[int64] `json:"rss"`
	PSS               taggedOpt[int64] `json:"pss"`
	ChildPID          taggedOpt[int64] `json:"child_pid"`
	ChildPrivateDirty taggedOpt[int64] `json:"child_private_dirty"`
	ChildPSS          taggedOpt[int64] `json:"child_pss"`
	HostMemAvailable  taggedOpt[int64] `json:"host_mem_available"`
	THPKernel         string           `json:"thp_kernel"`
	AnonHugePages     taggedOpt[int64] `json:"anon_huge_pages"`
}

type taggedTrigger struct {
	Kind   source.TriggerKind `json:"kind"`
	Detail string             `json:"detail"`
}

type taggedSaveProgress struct {
	Kind      source.SaveKind          `json:"kind"`
	Trigger   taggedTrigger            `json:"trigger"`
	Started   taggedSeconds            `json:"started_s"`
	Elapsed   taggedSeconds            `json:"elapsed_s"`
	Processed taggedOpt[int64]         `json:"processed"`
	Total     taggedOpt[int64]         `json:"total"`
	ETA       taggedOpt[taggedSeconds] `json:"eta_s"`
	Phase     string                   `json:"phase"`
	LiveCOW   taggedOpt[int64]         `json:"live_cow"`
	// The tracker's curve, which a recording does not keep.
	curve []source.CurvePoint
}

type taggedSample struct {
	Seq             uint64                 `json:"seq"`
	Offset          taggedSeconds          `json:"-"`
	At              taggedTime             `json:"-"`
	Info            taggedInfo             `json:"info"`
	Config          taggedSaveConfig       `json:"config"`
	OpsPerSec       taggedOpt[taggedFloat] `json:"ops_per_sec"`
	WriterOpsPerSec taggedOpt[taggedFloat] `json:"writer_ops_per_sec"`
	Ping            taggedLatency          `json:"ping"`
	Ping10s         taggedLatency          `json:"ping10s"`
	Proc            taggedProcMem          `json:"proc"`
	COW             taggedOpt[int64]       `json:"cow"`
	COWFrom         source.Instrument      `json:"cow_from"`
	Footprint       taggedOpt[int64]       `json:"footprint"`
	FootprintFrom   source.Instrument      `json:"footprint_from"`
	Save            *taggedSaveProgress    `json:"save"`
}

// TestTaggedMirrorsLayout checks that each tagged mirror has its source
// type's layout, which the prototype's cast relies on.
func TestTaggedMirrorsLayout(t *testing.T) {
	var same func(a, b reflect.Type)
	same = func(a, b reflect.Type) {
		if a.Size() != b.Size() || a.Kind() != b.Kind() {
			t.Fatalf("%s (%d bytes) and %s (%d bytes) differ", a, a.Size(), b, b.Size())
		}
		switch a.Kind() {
		case reflect.Struct:
			if a.NumField() != b.NumField() {
				t.Fatalf("%s and %s: %d and %d fields", a, b, a.NumField(), b.NumField())
			}
			for i := range a.NumField() {
				fa, fb := a.Field(i), b.Field(i)
				if fa.Offset != fb.Offset || fa.Name != fb.Name {
					t.Fatalf("%s.%s and %s.%s differ", a, fa.Name, b, fb.Name)
				}
				same(fa.Type, fb.Type)
			}
		case reflect.Array:
			if a.Len() != b.Len() {
				t.Fatalf("%s and %s differ in length", a, b)
			}
			same(a.Elem(), b.Elem())
		case reflect.Pointer:
			same(a.Elem(), b.Elem())
		}
	}
	same(reflect.TypeOf(source.Sample{}), reflect.TypeOf(taggedSample{}))
}

// TestTaggedPrototypeBytes checks that the prototype writes the real
// samples' whole lines byte for byte as the codec does.
func TestTaggedPrototypeBytes(t *testing.T) {
	for _, name := range []string{"idle", "busy"} {
		evs, h := recordedSamples(t, name)
		for i, ev := range evs {
			want := encodeEvent(ev, h.Epoch)
			got, err := taggedLine(ev, h.Epoch)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s sample %d:\n codec  %s\n tagged %s", name, i, want, got)
			}
		}
	}
}

func BenchmarkCodecEncodeTagged(b *testing.B) {
	evs, h := busySamples(b)
	n, i := 0, 0
	for b.Loop() {
		line, err := taggedLine(evs[i%len(evs)], h.Epoch)
		if err != nil {
			b.Fatal(err)
		}
		n += len(line)
		i++
	}
	b.ReportMetric(float64(n)/float64(i), "bytes/line")
}

type taggedReplica struct {
	IP    string           `json:"ip"`
	Port  taggedOpt[int64] `json:"port"`
	State string           `json:"state"`
}
