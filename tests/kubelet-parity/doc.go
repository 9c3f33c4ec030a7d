// Package parity is a differential test of libprober against the kubelet's own probe code.
//
// Every case starts its own servers on loopback (raw HTTP/1 servers writing exact bytes, Go's
// net/http TLS server, grpc-go's health server, an h2c server writing hand-made HTTP/2 frames),
// probes them once through k8s.io/kubernetes/pkg/probe (called as the kubelet calls it) and once
// through libprober's `prober check --json`, and compares what a user of each would see: the
// result class and the probe's text (after ports are normalised). Differences must be listed in
// known-differences.txt; see parity_test.go. Run it with ci/parity.sh.
package parity
