package source

// Derive sets s.COW and s.Footprint, each from the fastest instrument that
// reads it, and names the instrument. It reads only s.Info and s.Proc, what
// was measured, so a sample read from a recording gets them by the very
// rule the live one did: saves.Tracker.Observe calls it on every sample,
// live in the watcher and in a recording's reader. It does not allocate.
//
// COW (copy-on-write of the save child):
//   - the child's Private_Dirty from /proc (FromProc) while /proc shows a
//     save child: read at every sample, where INFO's current_cow_size is
//     refreshed by the server only about once a second;
//   - absent while /proc still lists the child but cannot read its
//     smaps_rollup although it reads the server's (the same user's): the
//     child is exiting. INFO's figure, up to a second old, would draw a
//     drop that never happened between the last /proc reading and 0;
//   - else, while a save runs, current_cow_size (FromInfo): a remote
//     server, a child /proc does not show yet or any more, a child whose
//     smaps_rollup vkwatch may not read, and a forkless save (no child: 0);
//   - else, no save running, 0: FromProc when vkwatch can read the
//     server's smaps_rollup (it would see a child), FromInfo when the
//     server reports current_cow_size;
//   - else absent.
//
// Footprint (what the host pays for the server):
//   - /proc: the server's RSS plus the child's Private_Dirty (FromProc);
//     with no child in /proc, the RSS alone: there is nothing else to pay
//     (no save, a forkless save, or a child that has just exited);
//   - absent for an exiting child, as for COW;
//   - else used_memory_rss + current_cow_size while a save runs, RSS
//     otherwise (FromInfo): the server's own estimate, for a remote server
//     or a child whose smaps_rollup vkwatch may not read;
//   - else absent.
func Derive(s *Sample) {
	in, p := &s.Info, &s.Proc
	_, running := SaveKindOf(in)
	procOK := p.RSS.OK && p.PSS.OK // smaps_rollup of the server is readable
	// A child /proc lists whose smaps_rollup it cannot read, while it
	// reads the server's: the child is exiting, its memory going.
	exiting := procOK && p.ChildPID.OK && !p.ChildPrivateDirty.OK

	s.COW, s.COWFrom = Opt[int64]{}, ""
	switch {
	case p.ChildPrivateDirty.OK:
		s.COW, s.COWFrom = p.ChildPrivateDirty, FromProc
	case exiting:
	case running && in.CurrentCOW.OK:
		s.COW, s.COWFrom = in.CurrentCOW, FromInfo
	case running:
	case procOK:
		s.COW, s.COWFrom = Some[int64](0), FromProc
	case in.CurrentCOW.OK:
		s.COW, s.COWFrom = Some[int64](0), FromInfo
	}

	s.Footprint, s.FootprintFrom = Opt[int64]{}, ""
	switch {
	case p.RSS.OK && p.ChildPrivateDirty.OK:
		s.Footprint, s.FootprintFrom = Some(p.RSS.V+p.ChildPrivateDirty.V), FromProc
	case p.RSS.OK && !p.ChildPID.OK:
		s.Footprint, s.FootprintFrom = p.RSS, FromProc
	case exiting:
	case in.RSS.OK && !running:
		s.Footprint, s.FootprintFrom = in.RSS, FromInfo
	case in.RSS.OK && in.CurrentCOW.OK:
		s.Footprint, s.FootprintFrom = Some(in.RSS.V+in.CurrentCOW.V), FromInfo
	}
}
