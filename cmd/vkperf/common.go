package main

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source/server"
)

// testServer is a redis-server started for a phase, with an admin
// connection of vkperf's own.
type testServer struct {
	*server.Server
	admin *redis.Client
}

// benchServer is where the latency, observer and writers checks begin: the
// benchmark tool's path and a fresh server; the caller stops the server.
func benchServer(ctx context.Context) (string, *testServer, error) {
	rb, err := toolPath("valkey-benchmark", "redis-benchmark")
	if err != nil {
		return "", nil, err
	}
	srv, err := startServer(ctx)
	if err != nil {
		return "", nil, err
	}
	return rb, srv, nil
}

// startServer starts a server on a free loopback port with the debug
// command enabled (DEBUG SLEEP) and waits until it answers.
func startServer(ctx context.Context, args ...string) (*testServer, error) {
	s, err := server.Start(ctx, server.Options{Args: append([]string{"--enable-debug-command", "yes"}, args...), StartTimeout: time.Minute})
	if err != nil {
		return nil, err
	}
	c := redis.NewClient(&redis.Options{Addr: s.Addr, PoolSize: 1, MaxRetries: -1})
	if err := c.Ping(ctx).Err(); err != nil {
		c.Close()
		s.Stop()
		return nil, err
	}
	return &testServer{Server: s, admin: c}, nil
}

// startServers starts n servers (startServer); stop stops those that
// started, after an error too.
func startServers(ctx context.Context, n int, args ...string) (srvs []*testServer, stop func(), err error) {
	stop = func() {
		for _, s := range srvs {
			s.stop()
		}
	}
	for range n {
		s, err := startServer(ctx, args...)
		if err != nil {
			return srvs, stop, err
		}
		srvs = append(srvs, s)
	}
	return srvs, stop, nil
}

// alternate runs a then b, or b then a in odd rounds, so that neither
// program of a comparison always runs first; it stops at the first error.
func alternate(round int, a, b func() error) error {
	if round%2 == 1 {
		a, b = b, a
	}
	if err := a(); err != nil {
		return err
	}
	return b()
}

func (s *testServer) stop() {
	s.admin.Close()
	s.Server.Stop()
}

// infoInt reads one integer field of INFO section.
func (s *testServer) infoInt(ctx context.Context, section, field string) (int64, error) {
	text, err := s.admin.Info(ctx, section).Result()
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(text, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(l), ":"); ok && k == field {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("INFO %s has no %s", section, field)
}

// clients is connected_clients, vkperf's admin connection included.
func (s *testServer) clients(ctx context.Context) (int64, error) {
	return s.infoInt(ctx, "clients", "connected_clients")
}

// waitClients waits until the server has at least n clients.
func (s *testServer) waitClients(ctx context.Context, n int64, timeout time.Duration) error {
	return waitUntil(ctx, fmt.Sprintf("%d clients on %s", n, s.Addr), timeout, func() (bool, error) {
		c, err := s.clients(ctx)
		return c >= n, err
	})
}

// summary is the mean, minimum and maximum of a series.
type summary struct {
	Mean, Min, Max, Median float64
	N                      int
}

func summarize(xs []float64) summary {
	if len(xs) == 0 {
		return summary{Mean: math.NaN(), Min: math.NaN(), Max: math.NaN(), Median: math.NaN()}
	}
	s := summary{Min: math.Inf(1), Max: math.Inf(-1), N: len(xs)}
	for _, x := range xs {
		s.Mean += x
		s.Min = min(s.Min, x)
		s.Max = max(s.Max, x)
	}
	s.Mean /= float64(len(xs))
	ys := slices.Clone(xs)
	slices.Sort(ys)
	if n := len(ys); n%2 == 1 {
		s.Median = ys[n/2]
	} else {
		s.Median = (ys[n/2-1] + ys[n/2]) / 2
	}
	return s
}

// ratioString formats a ratio summary as "0.995 (min 0.981, max 1.010, n=5)".
func (s summary) ratioString() string {
	return fmt.Sprintf("%.3f (min %.3f, max %.3f, n=%d)", s.Mean, s.Min, s.Max, s.N)
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// us formats a duration in microseconds with one decimal.
func us(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Microsecond), 'f', 1, 64) + " µs"
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
