// go_kubelet_grpc: the Go baseline of ci/bench.sh's grpc_oneshot, doing what the kubelet's
// gRPC probe does (k8s.io/kubernetes/pkg/probe/grpc, grpcProber.Probe).
//
//	go_kubelet_grpc grpc_oneshot -target HOST:PORT [-service NAME] [-n 20000] [-conc 64]
//	                [-timeout 1s] [-label NAME] [-impl go_kubelet]
//
// Per probe, as the kubelet: a context with the probe's timeout; grpc.DialContext with
// WithUserAgent("kube-probe/1.37"), WithBlock and plaintext credentials (the kubelet's
// WithInsecure), so the dial returns once the connection and the HTTP/2 handshake are up; then
// grpc_health_v1's Check of the service with empty outgoing metadata; the status compared
// with SERVING; and conn.Close. A separate module from go_kubelet (which needs only the
// standard library) because it needs google.golang.org/grpc from the module proxy.
//
//	go_kubelet_grpc grpc_keepalive -target HOST:PORT [...] [-impl go_grpc_shared]
//
// grpc_keepalive is not the kubelet: grpc-go as a long-lived client uses it, one ClientConn
// (grpc.NewClient, plaintext, the same user agent) made before the measured loop and shared by
// every goroutine, each Check with its own context of the probe's timeout (as grpc_oneshot's),
// its connection kept and its streams multiplexed by grpc-go.
//
// CONC goroutines take probes from a shared counter. Prints one BENCH line with the fields of
// go_kubelet and prober-bench (CPU from getrusage RUSAGE_SELF around the measured loop;
// rss_kb is ru_maxrss).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
)

var (
	target   = flag.String("target", "", "HOST:PORT")
	service  = flag.String("service", "", "the service asked about (empty: the server)")
	nFlag    = flag.Int("n", 20000, "probes")
	concFlag = flag.Int("conc", 64, "in flight")
	timeout  = flag.Duration("timeout", time.Second, "probe timeout")
	label    = flag.String("label", "", "scenario name printed")
	implName = flag.String("impl", "go_kubelet", "impl name printed")
)

// grpcProbe is grpcProber.Probe: a new ClientConn per probe, Check, Close.
func grpcProbe(addr, svc string) error {
	opts := []grpc.DialOption{
		grpc.WithUserAgent("kube-probe/1.37"),
		grpc.WithBlock(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	//lint:ignore SA1019 the kubelet's own call (DialContext with WithBlock), kept for parity.
	conn, err := grpc.DialContext(ctx, addr, opts...)
	if err != nil {
		return fmt.Errorf("failed to connect service at %q: %w", addr, err)
	}
	defer func() { _ = conn.Close() }()
	client := healthpb.NewHealthClient(conn)
	resp, err := client.Check(metadata.NewOutgoingContext(ctx, make(metadata.MD)),
		&healthpb.HealthCheckRequest{Service: svc})
	if err != nil {
		return fmt.Errorf("health rpc probe failed: %w", err)
	}
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return fmt.Errorf("service unhealthy (responded with %q)", resp.GetStatus().String())
	}
	return nil
}

// sharedProbe makes one ClientConn, connects it and checks once (before the measured loop, so
// that the dial is not counted), and returns a probe that runs Check on it.
func sharedProbe(addr, svc string) (func() error, error) {
	conn, err := grpc.NewClient(addr, grpc.WithUserAgent("kube-probe/1.37"),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("client for %q: %w", addr, err)
	}
	client := healthpb.NewHealthClient(conn)
	check := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), *timeout)
		defer cancel()
		resp, err := client.Check(metadata.NewOutgoingContext(ctx, make(metadata.MD)),
			&healthpb.HealthCheckRequest{Service: svc})
		if err != nil {
			return fmt.Errorf("health rpc probe failed: %w", err)
		}
		if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			return fmt.Errorf("service unhealthy (responded with %q)", resp.GetStatus().String())
		}
		return nil
	}
	if err := check(); err != nil {
		return nil, err
	}
	return check, nil
}

type usage struct {
	wall      time.Time
	user, sys int64
}

func tvUs(tv syscall.Timeval) int64 { return tv.Sec*1_000_000 + tv.Usec }

func now() usage {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return usage{time.Now(), tvUs(ru.Utime), tvUs(ru.Stime)}
}

func maxRSS() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Maxrss
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "go_kubelet_grpc: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	if len(os.Args) < 2 || (os.Args[1] != "grpc_oneshot" && os.Args[1] != "grpc_keepalive") {
		fail("usage: go_kubelet_grpc grpc_oneshot|grpc_keepalive -target HOST:PORT [-service NAME] [-n N] [-conc N]")
	}
	if err := flag.CommandLine.Parse(os.Args[2:]); err != nil {
		os.Exit(64)
	}
	if *target == "" {
		fail("-target HOST:PORT is required")
	}
	name := *label
	if name == "" {
		name = os.Args[1]
	}
	n, conc := max(*nFlag, 1), max(*concFlag, 1)
	addr, svc := *target, *service
	probe := func() error { return grpcProbe(addr, svc) }
	if os.Args[1] == "grpc_keepalive" {
		shared, err := sharedProbe(addr, svc)
		if err != nil {
			fail("%v", err)
		}
		probe = shared
	}

	var next, ok atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	a := now()
	for range min(conc, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(n) {
				if err := probe(); err != nil {
					firstErr.CompareAndSwap(nil, err.Error())
				} else {
					ok.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	b := now()
	if e := firstErr.Load(); e != nil {
		fmt.Fprintf(os.Stderr, "go_kubelet_grpc: %d of %d probes failed; first: %s\n", int64(n)-ok.Load(), n, e)
	}
	wall := b.wall.Sub(a.wall).Seconds()
	user, sys := float64(b.user-a.user), float64(b.sys-a.sys)
	fn := float64(n)
	fmt.Printf("BENCH scenario=%s impl=%s n=%d ok=%d fail=%d wall_s=%.3f rate_per_s=%.1f "+
		"cpu_us_per_probe=%.2f user_us_per_probe=%.2f sys_us_per_probe=%.2f cpu_pct=%.1f rss_kb=%d conc=%d\n",
		name, *implName, n, ok.Load(), int64(n)-ok.Load(), wall, fn/wall,
		(user+sys)/fn, user/fn, sys/fn, (user+sys)/1e4/wall, maxRSS(), conc)
}
