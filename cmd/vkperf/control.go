package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// runControl is vkperf re-executed as a control process for the own-cost
// breakdown, until SIGTERM: "timer" only wakes every 2 ms; "ping" PINGs
// each address every 2 ms on a net.Conn of its own, as simply as Go allows.
func runControl(mode string, addrs []string) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	switch mode {
	case "timer":
		t := time.NewTicker(probeInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-t.C:
			}
		}
	case "ping":
		errs := make(chan error, len(addrs))
		for _, a := range addrs {
			go func() { errs <- controlPing(ctx, a) }()
		}
		for range addrs {
			if err := <-errs; err != nil && ctx.Err() == nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("--control: unknown mode %q", mode)
}

func controlPing(ctx context.Context, addr string) error {
	c, err := net.DialTimeout("tcp", addr, 3*time.Second)
	if err != nil {
		return err
	}
	context.AfterFunc(ctx, func() { c.Close() })
	ping := []byte("*1\r\n$4\r\nPING\r\n")
	buf := make([]byte, 64)
	t := time.NewTicker(probeInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if _, err := c.Write(ping); err != nil {
			return err
		}
		for {
			n, err := c.Read(buf)
			if err != nil {
				return err
			}
			if n > 0 && buf[n-1] == '\n' {
				break
			}
		}
	}
}
