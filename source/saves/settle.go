package saves

import "github.com/vkwatch/vkwatch/source"

// Every save has figures, a short one too: where the samples, taken every
// interval, saw nothing of a save's cost, the report takes the server's,
// named as such. A save shorter than a sample (or one whose child had
// exited when /proc looked) would otherwise read n/a beside a
// copy-on-write the server measured. What a sample did read stays the
// sample's: it says what that instrument saw, and when.

// settle fills what no sample saw of a save that ended with sample s,
// from the server's own figures: the copy-on-write peak (a child's dirty
// pages only grow: its peak is its last, COW), also in place of INFO's
// current_cow_size read 0 though COW says pages were copied (refreshed
// once a second, it had not been yet), and the footprint's rise (the
// child's pages on top of the parent's RSS rise at the end).
// base is the footprint's baseline instrument and the RSS it read before
// the save.
func settle(rep *source.SaveReport, s *source.Sample, baseFrom source.Instrument, baseRSS source.Opt[int64]) {
	cow, ok := rep.COW.Get()
	if !ok {
		return
	}
	falseZero := rep.PeakCOW.OK && rep.PeakCOW.V == 0 && rep.PeakCOWFrom != source.FromProc && cow > 0
	if rep.COWFrom != source.FromNoChild && (!rep.PeakCOW.OK || falseZero) {
		rep.PeakCOW, rep.PeakCOWFrom, rep.PeakAtProgress = rep.COW, rep.COWFrom, source.Some(1.0)
	}
	end := s.Info.RSS
	if baseFrom == source.FromProc {
		end = s.Proc.RSS
	}
	if !end.OK || !baseRSS.OK {
		return
	}
	if !rep.PeakFootprintDelta.OK {
		rise := end.V - baseRSS.V + cow
		from := string(baseFrom) + " rss"
		if rep.COWFrom != source.FromNoChild {
			from += " + " + string(rep.COWFrom)
		}
		rep.PeakFootprintDelta, rep.PeakFootprintFrom = source.Some(rise), source.Instrument(from)
	}
}
