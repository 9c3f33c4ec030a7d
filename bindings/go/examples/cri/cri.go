package cri

import (
	"context"
	"strings"
	"time"

	"github.com/libprober/prober/bindings/go/prober"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// ExecSync is the kubelet's exec probe of a container, run the kubelet's way: each run is a CRI
// ExecSync of cmd in the container, with the probe's timeout (in whole seconds, as the CRI
// takes it). The engine schedules the runs and applies thresholds and startup gating; the
// container's runtime runs the command in the container's namespaces, which the host process
// need not enter.
//
// As the kubelet: exit status 0 is Success and any other Failure, the output is stdout followed
// by stderr; an error of the call itself (no such container, the runtime unreachable) is
// Unknown, which the engine retries at once and then drops without counting. A run that
// reaches the probe's timeout is Failure with ReasonTimeout, whatever the runtime says later.
func ExecSync(rt runtimeapi.RuntimeServiceClient, containerID string, cmd ...string) prober.Spec {
	return prober.HostRun(strings.Join(cmd, " "), func(ctx context.Context) (prober.Result, string) {
		var timeout int64
		if deadline, ok := ctx.Deadline(); ok {
			timeout = int64((time.Until(deadline) + time.Second - 1) / time.Second)
		}
		resp, err := rt.ExecSync(ctx, &runtimeapi.ExecSyncRequest{
			ContainerId: containerID,
			Cmd:         cmd,
			Timeout:     timeout,
		})
		if err != nil {
			return prober.Unknown, err.Error()
		}
		out := string(resp.Stdout) + string(resp.Stderr)
		if resp.ExitCode != 0 {
			return prober.Failure, out
		}
		return prober.Success, out
	})
}
