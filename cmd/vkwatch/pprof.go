//go:build pprof

package main

// Profiling for developers, never in the shipped binary: built with
// `go build -tags pprof ./cmd/vkwatch`, VKWATCH_PPROF=127.0.0.1:6060 serves
// net/http/pprof there (go tool pprof http://127.0.0.1:6060/debug/pprof/heap).

import (
	"net/http"
	_ "net/http/pprof"
	"os"
)

func init() {
	if addr := os.Getenv("VKWATCH_PPROF"); addr != "" {
		go http.ListenAndServe(addr, nil)
	}
}
