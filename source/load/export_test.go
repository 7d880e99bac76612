package load

// UsesEventLoop tells the tests which path the writers took.
func UsesEventLoop(w *Writers) bool { return w.loop }
