// Package prober is the Go binding of libprober: kubelet-grade health probing (TCP connect,
// HTTP(S) GET, exec, gRPC health; beyond the kubelet, DNS queries and ICMP echoes as
// blackbox_exporter's probers) with Kubernetes semantics, run by a poll-driven engine written
// in Rust and linked through cgo.
//
// # One-shot probes
//
// Check runs one probe and honours its context: when the context ends first the probe is
// cancelled (socket closed, command and its process group killed and reaped) and Check
// returns an error wrapping ctx.Err(). A probe that fails is not an error; its Outcome says
// Failure and why. Every Check runs on one engine that the package starts on first use.
//
//	o, err := prober.Check(ctx, prober.HTTP("http://127.0.0.1:8080/healthz"))
//	if err != nil { ... }          // invalid spec (ErrInvalidSpec), or ctx ended
//	if !o.Result.OK() { log.Print(o.Message) }
//
// A Spec is a plain value, built with TCP, HTTP, Exec, GRPC, DNS or ICMP or as a struct
// literal; zero fields take libprober's (the kubelet's) defaults.
//
// # Engines
//
// An Engine runs periodic workers (startup, readiness and liveness probes of targets) and
// one-shot probes (Check, Submit) on one libprober engine, driven by one goroutine that turns
// the engine in non-blocking cgo calls (queued Submits started, I/O and timers processed, as
// many events handed over as the Events channel has room for) and delivers the events on the
// Events channel; with nothing to do it sleeps polling the engine's descriptor (readable on
// I/O, a wake-up, and by itself when a timer falls due), without holding the engine. Methods
// may be called from any goroutine. Close frees the engine; until then its goroutine owns it.
//
// Probing and Published never wait for the receiver of Events: while the channel is full,
// state changes are coalesced to the latest per (target, role), run events are dropped
// oldest-first past a bound and counted (Stats), and check events are kept.
//
// # Errors
//
// Invalid input gives an *Error with the library's status code and its explanation
// (prober_last_error, read inside the failing cgo call so that it is the right thread's).
// Branch with errors.Is on ErrInvalidSpec, ErrUnknownTarget, ErrNoProbe and ErrClosed.
//
// # Tests
//
// NewTestEngine makes an engine closed by t.Cleanup; code that depends on the Checker
// interface can be given a fake (CheckerFunc).
//
// # Linking
//
// By default the package links libprober statically from lib/<goos>_<goarch>/libprober.a with
// the header include/prober.h: in the module as published these are prebuilt for linux/amd64
// and linux/arm64 (no Rust needed); in a checkout of the repository they are symbolic links to
// what cargo builds (cargo build -p prober-ffi --release: target/release/libprober.a) and to
// the repository's include/. With -tags prober_pkgconfig it uses an installed copy through
// pkg-config (ci/install.sh PREFIX installs one with prober.pc): for musl, other platforms and
// distributions' packages. At init the package checks that the
// library's ABI version matches the header's and panics if not.
//
// libprober installs no signal handlers, changes no signal masks, never calls waitpid(-1) and
// creates every descriptor close-on-exec, so it is safe inside a Go process.
package prober
