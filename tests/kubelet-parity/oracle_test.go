package parity

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/component-base/version"
	remote "k8s.io/cri-client/pkg"
	"k8s.io/kubernetes/pkg/probe"
	execprobe "k8s.io/kubernetes/pkg/probe/exec"
	grpcprobe "k8s.io/kubernetes/pkg/probe/grpc"
	httpprobe "k8s.io/kubernetes/pkg/probe/http"
	tcpprobe "k8s.io/kubernetes/pkg/probe/tcp"
	"k8s.io/kubernetes/third_party/forked/golang/expansion"
	utilexec "k8s.io/utils/exec"
)

// verdict is what a user of either side sees: the result class and the probe's text.
// For the kubelet the text is the probe's output string (what its events show), or the error
// when the probe errored (class "error": the kubelet retries it, then records Failure).
type verdict struct {
	class string
	text  string
}

// kubeletVersionOK says whether the binary was linked with the kubelet's version, as a kubelet
// build is (-ldflags -X k8s.io/component-base/version.gitMajor=1 ...); without it the kubelet's
// User-Agent would be "kube-probe/.".
func kubeletVersionOK() (string, bool) {
	v := version.Get()
	return v.Major + "." + v.Minor, v.Major == "1" && v.Minor == kubeletMinor
}

const kubeletMinor = "37"

func kubeletVerdict(res probe.Result, out string, err error) verdict {
	if err != nil {
		return verdict{"error", err.Error()}
	}
	return verdict{string(res), out}
}

// runKubelet probes tg with the kubelet's code.
func runKubelet(tg *target) verdict {
	switch tg.kind {
	case kindHTTP:
		get := &v1.HTTPGetAction{
			Path:   tg.path,
			Port:   intstr.FromInt32(int32(tg.port)),
			Host:   tg.host,
			Scheme: v1.URIScheme(strings.ToUpper(tg.scheme)),
		}
		for _, h := range tg.headers {
			get.HTTPHeaders = append(get.HTTPHeaders, v1.HTTPHeader{Name: h[0], Value: h[1]})
		}
		// The kubelet's prober: NewRequestForHTTPGetAction with the "probe" fragment, then
		// http.New(followNonLocalRedirects=false).Probe (pkg/kubelet/prober/prober.go).
		req, err := httpprobe.NewRequestForHTTPGetAction(get, &v1.Container{}, "", "probe")
		if err != nil {
			return verdict{"error", err.Error()}
		}
		pr := httpprobe.New(false)
		if tg.verifyTLS != nil {
			// The kubelet never verifies; for the verification extension the oracle is Go's
			// crypto/tls with RootCAs set, through the same prober code.
			pr = httpprobe.NewWithTLSConfig(tg.verifyTLS, false)
		}
		if tg.h2c {
			// httpGet.protocol: HTTP2 with the H2CContainerProbe gate on (KEP-5999):
			// pkg/kubelet/prober/prober.go calls ProbeH2C instead of Probe.
			return kubeletVerdict(pr.ProbeH2C(req, tg.timeout))
		}
		return kubeletVerdict(pr.Probe(req, tg.timeout))
	case kindTCP:
		// pkg/kubelet/prober/prober.go resolves the port first.
		port, err := probe.ResolveContainerPort(intstr.FromInt32(int32(tg.port)), &v1.Container{})
		if err != nil {
			return verdict{"error", err.Error()}
		}
		return kubeletVerdict(tcpprobe.New().Probe(tg.host, port, tg.timeout))
	case kindGRPC:
		return kubeletVerdict(grpcprobe.New().Probe(tg.host, tg.service, tg.port, tg.timeout, grpcprobe.ProbeOptions{}))
	case kindExec:
		// pkg/kubelet/prober/prober.go: ExpandContainerCommandOnlyStatic (whose body is these
		// lines over the container's env), then the exec prober over a Cmd whose run returns
		// stdout followed by stderr, as the CRI runtime's ExecSync does.
		mapping := expansion.MappingFuncFor(tg.envMap())
		var cmd []string
		for _, a := range tg.argv {
			cmd = append(cmd, expansion.Expand(a, mapping))
		}
		c := &localExec{cmd: cmd, env: tg.env, timeout: tg.timeout}
		return kubeletVerdict(execprobe.New().Probe(c))
	}
	panic("unknown kind")
}

// localExec is the Cmd the kubelet's exec prober gets (pkg/kubelet/prober's execInContainer),
// with the container runtime replaced by a local child process. Its errors are the ones the
// kubelet gets from k8s.io/cri-client's ExecSync: a CodeExitError for a non-zero exit, and
// ErrCommandTimedOut wrapped with the command and the timeout.
type localExec struct {
	cmd     []string
	env     []string
	timeout time.Duration
	writer  io.Writer
}

var _ utilexec.Cmd = (*localExec)(nil)

func (e *localExec) run() ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), e.timeout)
	defer cancel()
	c := exec.Command(e.cmd[0], e.cmd[1:]...)
	c.Env = append(os.Environ(), e.env...)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.WaitDelay = time.Second
	if err := c.Start(); err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
		<-done
		// k8s.io/cri-client/pkg/remote_runtime.go ExecSync's wording.
		return nil, fmt.Errorf("%w: %q timed out after %s", remote.ErrCommandTimedOut, strings.Join(e.cmd, " "), e.timeout)
	}
	_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
	data := append(stdout.Bytes(), stderr.Bytes()...)
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code := exitErr.ExitCode()
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal()) // as a container runtime reports it
		}
		return data, utilexec.CodeExitError{Err: fmt.Errorf("command '%s' exited with %d: %s", strings.Join(e.cmd, " "), code, stderr.Bytes()), Code: code}
	}
	return data, err
}

func (e *localExec) Start() error {
	data, err := e.run()
	if e.writer != nil {
		_, _ = e.writer.Write(data)
	}
	return err
}
func (e *localExec) Run() error                         { return nil }
func (e *localExec) CombinedOutput() ([]byte, error)    { return e.run() }
func (e *localExec) Output() ([]byte, error)            { return nil, errors.New("unimplemented") }
func (e *localExec) SetDir(string)                      {}
func (e *localExec) SetStdin(io.Reader)                 {}
func (e *localExec) SetStdout(out io.Writer)            { e.writer = out }
func (e *localExec) SetStderr(out io.Writer)            { e.writer = out }
func (e *localExec) SetEnv([]string)                    {}
func (e *localExec) Stop()                              {}
func (e *localExec) Wait() error                        { return nil }
func (e *localExec) StdoutPipe() (io.ReadCloser, error) { return nil, errors.New("unimplemented") }
func (e *localExec) StderrPipe() (io.ReadCloser, error) { return nil, errors.New("unimplemented") }
