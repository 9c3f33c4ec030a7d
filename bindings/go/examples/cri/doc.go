// Package cri shows host-run probes (prober.HostRun) driving exec probes through a container
// runtime's CRI ExecSync, as the kubelet runs them, against a fake runtime in its tests.
//
// It is a module of its own so that the binding's users do not get the CRI and gRPC modules as
// dependencies: only these tests need them.
package cri
