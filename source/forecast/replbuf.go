package forecast

import "github.com/vkwatch/vkwatch/source"

// ReplBuffer is the other memory a replica's full sync costs its primary:
// while the child streams the snapshot, the writes the replica will
// replay after it pile up in the parent's output buffer for that replica.
type ReplBuffer struct {
	// Used is mem_clients_slaves (INFO memory): all the replicas'
	// clients, their buffers above all.
	Used int64
	// Hard, Soft and SoftSecs are client-output-buffer-limit replica
	// (CONFIG GET); absent when it could not be read, 0 for no limit.
	Hard, Soft, SoftSecs source.Opt[int64]
}

// FullSyncBuffer is the replica output buffer of a sample taken during a
// replica's full sync: a save a replica started, or any save while a
// replica waits for or receives one (wait_bgsave, send_bulk). False
// otherwise, or when the server does not report mem_clients_slaves.
func FullSyncBuffer(s *source.Sample) (ReplBuffer, bool) {
	if s == nil || s.Save == nil || !fullSync(s) {
		return ReplBuffer{}, false
	}
	used, ok := s.Info.MemClientsReplicas.Get()
	if !ok {
		return ReplBuffer{}, false
	}
	c := &s.Config
	return ReplBuffer{Used: used, Hard: c.ReplicaBufHard, Soft: c.ReplicaBufSoft, SoftSecs: c.ReplicaBufSoftSecs}, true
}

func fullSync(s *source.Sample) bool {
	if s.Save.Trigger.Kind == source.TriggerReplica {
		return true
	}
	in := &s.Info
	if in.ReplicasWaitingBGSave > 0 {
		return true
	}
	for i := range min(in.NumReplicas, source.MaxReplicas) {
		if st := in.Replicas[i].State; st == "wait_bgsave" || st == "send_bulk" {
			return true
		}
	}
	return false
}

// Limit is the limit the buffer is measured against: the hard limit
// when one is set, else the soft one; false when neither is.
func (b ReplBuffer) Limit() (int64, bool) {
	if h, ok := b.Hard.Get(); ok && h > 0 {
		return h, true
	}
	if s, ok := b.Soft.Get(); ok && s > 0 {
		return s, true
	}
	return 0, false
}
