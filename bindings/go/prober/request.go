package prober

// #include "shim.h"
// /* The request helpers neither keep the pointers they are given nor call back into Go. */
// #cgo noescape gp_spec_set_method
// #cgo nocallback gp_spec_set_method
// #cgo noescape gp_spec_set_body
// #cgo nocallback gp_spec_set_body
// #cgo noescape gp_spec_new_unix
// #cgo nocallback gp_spec_new_unix
// #cgo noescape gp_spec_set_unix_socket
// #cgo nocallback gp_spec_set_unix_socket
// #cgo noescape gp_spec_add_grpc_metadata
// #cgo nocallback gp_spec_add_grpc_metadata
// #cgo noescape gp_spec_set_grpc_user_agent
// #cgo nocallback gp_spec_set_grpc_user_agent
// #cgo noescape gp_spec_set_grpc_authority
// #cgo nocallback gp_spec_set_grpc_authority
// #cgo noescape gp_spec_set_tcp_starttls
// #cgo nocallback gp_spec_set_tcp_starttls
import "C"

// Unix is a connect check of a Unix socket: a path, or in gRPC's naming
// "unix:///run/app.sock", "unix-abstract:NAME" (Linux's abstract namespace). The TCP probe's
// rules apply, Send and Expect included; a missing socket file is a Failure with
// ReasonRefused.
func Unix(socket string) Spec { return Spec{Kind: KindTCP, UnixSocket: socket} }

// createUnix makes the C spec of a probe through a Unix socket when the spec names no host
// and port of its own: a connect check (Unix), or a gRPC probe (host "localhost", as grpc-go
// sends for unix: targets). done is false for every other spec.
func (b *cbuild) createUnix(s *Spec, out **C.prober_spec) (done bool, err error) {
	if s.UnixSocket == "" || s.Port != 0 || (s.Kind != KindTCP && s.Kind != KindGRPC) {
		return false, nil
	}
	if s.Kind == KindGRPC {
		host := s.Host
		if host == "" {
			host = "localhost"
		}
		h, err := b.str(host, StatusInvalidHost, "host")
		if err != nil {
			return true, err
		}
		svc, err := b.str(s.Service, StatusInvalid, "service")
		if err != nil {
			return true, err
		}
		// The port names nothing through a socket; 1 passes the constructor's check.
		return true, b.check(C.gp_spec_new_grpc(h, 1, svc, out, &b.err))
	}
	if s.Host != "" {
		return true, &Error{Code: StatusInvalid, Msg: "a Unix socket connect check has no Host (set UnixSocket alone, or Host and Port)"}
	}
	socket, err := b.str(s.UnixSocket, StatusInvalid, "Unix socket")
	if err != nil {
		return true, err
	}
	return true, b.check(C.gp_spec_new_unix(socket, out, &b.err))
}

// configureRequest applies the request options beyond the kubelet (issue 25): Method and
// Body of HTTP probes, the Unix socket of HTTP, TCP and gRPC probes, Metadata, UserAgent and
// Authority of gRPC probes.
func (b *cbuild) configureRequest(s *Spec, cs *C.prober_spec) error {
	if s.UnixSocket != "" && !(s.Kind == KindTCP && s.Port == 0) {
		socket, err := b.str(s.UnixSocket, StatusInvalid, "Unix socket")
		if err != nil {
			return err
		}
		if err := b.check(C.gp_spec_set_unix_socket(cs, socket, &b.err)); err != nil {
			return err
		}
	}
	if s.Method != "" {
		m, err := b.str(s.Method, StatusInvalid, "method")
		if err != nil {
			return err
		}
		if err := b.check(C.gp_spec_set_method(cs, m, &b.err)); err != nil {
			return err
		}
	}
	for _, m := range s.Metadata {
		k, err := b.str(m.Name, StatusInvalid, "metadata key")
		if err != nil {
			return err
		}
		v, err := b.str(m.Value, StatusInvalid, "metadata value")
		if err != nil {
			return err
		}
		if err := b.check(C.gp_spec_add_grpc_metadata(cs, k, v, &b.err)); err != nil {
			return err
		}
	}
	if s.UserAgent != "" {
		ua, err := b.str(s.UserAgent, StatusInvalid, "user agent")
		if err != nil {
			return err
		}
		if err := b.check(C.gp_spec_set_grpc_user_agent(cs, ua, &b.err)); err != nil {
			return err
		}
	}
	if s.Authority != "" {
		a, err := b.str(s.Authority, StatusInvalid, "authority")
		if err != nil {
			return err
		}
		if err := b.check(C.gp_spec_set_grpc_authority(cs, a, &b.err)); err != nil {
			return err
		}
	}
	if s.StartTLS {
		if err := b.check(C.gp_spec_set_tcp_starttls(cs, true, &b.err)); err != nil {
			return err
		}
	}
	if len(s.Body) > 0 {
		// Copied to C memory: C copies it again and keeps no pointer to it.
		data := C.CBytes(s.Body)
		defer C.free(data)
		if err := b.check(C.gp_spec_set_body(cs, (*C.uint8_t)(data), C.size_t(len(s.Body)), &b.err)); err != nil {
			return err
		}
	}
	return nil
}
