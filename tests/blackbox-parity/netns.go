package main

// Cases inside a network namespace the harness makes (the ICMP cases' unreachable and
// expiring addresses): both exporters run there (`ip netns exec`), and /probe is asked over a
// connection made from inside it, on a thread that entered it and then ends.

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

var netnsSeq atomic.Int32

// makeNetns makes a network namespace with lo up, deleted by env.close.
func makeNetns(env *caseEnv, tag string) string {
	name := fmt.Sprintf("bbparity-%s-%d-%d", tag, os.Getpid(), netnsSeq.Add(1))
	ipCmd("netns", "add", name)
	env.onClose(func() { exec.Command("ip", "netns", "del", name).Run() })
	ipCmd("-n", name, "link", "set", "lo", "up")
	return name
}

// ipCmd runs `ip ARGS...`, panicking with its complaint: a case that needs namespaces fails
// loudly without them (root and iproute2), it never skips.
func ipCmd(args ...string) {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		panic(fmt.Sprintf("ip %s: %v: %s (namespace cases need root and iproute2)", strings.Join(args, " "), err, out))
	}
}

// nsClient is an HTTP client whose connections are made inside the namespace name.
func nsClient(name string) *http.Client {
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		type result struct {
			c   net.Conn
			err error
		}
		ch := make(chan result, 1)
		go func() {
			// Never unlocked: the thread ends with this goroutine instead of going back to
			// the scheduler in another namespace.
			runtime.LockOSThread()
			fd, err := unix.Open("/run/netns/"+name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				ch <- result{nil, err}
				return
			}
			defer unix.Close(fd)
			if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
				ch <- result{nil, err}
				return
			}
			var d net.Dialer
			c, err := d.DialContext(ctx, network, addr)
			ch <- result{c, err}
		}()
		r := <-ch
		return r.c, r.err
	}
	return &http.Client{Transport: &http.Transport{DialContext: dial, DisableKeepAlives: true}}
}
