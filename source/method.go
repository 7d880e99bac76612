package source

// MethodSwitch is the command that sets a server's bgsave-default-method
// to the other method than c's, and that method; ok is false where the
// server cannot save both ways: no such setting (Redis, Valkey before
// 9.2), or forkless-infrastructure-enabled not yes (a 9.2 server started
// without it refuses forkless, and only a restart changes that). The
// monitor's method key sends it with the watcher's Do, after asking; the
// server's answer is the user's news, and nothing puts it back: it is the
// user's own change.
func MethodSwitch(c SaveConfig) (args []string, to string, ok bool) {
	switch {
	case c.Method == "" || !c.ForklessInfra.V || !c.ForklessInfra.OK:
		return nil, "", false
	case c.Method == "forkless":
		to = "fork"
	default:
		to = "forkless"
	}
	return []string{"CONFIG", "SET", "bgsave-default-method", to}, to, true
}
