package main

// The cases of blackbox_exporter's prober/grpc_test.go. Upstream's modules have
// IPProtocolFallback false and its target is localhost, which it expects to have ::1 (it
// skips on CI otherwise); here the modules keep the YAML default (fallback to IPv4), the
// servers listen on 127.0.0.1, and the target is localhost.

import (
	"context"
	"crypto/tls"
	"net"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	"google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
)

func grpcModule(extra ...string) string {
	m := "prober: grpc\ntimeout: 2s\ngrpc:\n  ip_protocol_fallback: true\n"
	for _, e := range extra {
		for _, line := range strings.Split(e, "\n") {
			m += "  " + line + "\n"
		}
	}
	return m
}

// serveGRPC runs a grpc-go server on 127.0.0.1 with the standard health service (unless
// statuses is nil) and returns localhost:PORT.
func serveGRPC(env *caseEnv, statuses map[string]grpc_health_v1.HealthCheckResponse_ServingStatus, opts ...grpc.ServerOption) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	s := grpc.NewServer(opts...)
	if statuses != nil {
		hs := health.NewServer()
		for svc, st := range statuses {
			hs.SetServingStatus(svc, st)
		}
		grpc_health_v1.RegisterHealthServer(s, hs)
	}
	go s.Serve(ln)
	env.onClose(s.Stop)
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return "localhost:" + port
}

var serving = map[string]grpc_health_v1.HealthCheckResponse_ServingStatus{"service": grpc_health_v1.HealthCheckResponse_SERVING}

func init() {
	grpcMetrics := []string{"probe_grpc_healthcheck_response{serving_status}", "probe_grpc_ssl", "probe_grpc_status_code"}
	add(tcase{
		name:    "grpc/TestGRPCConnection",
		module:  grpcModule(),
		setup:   func(env *caseEnv) string { return serveGRPC(env, serving) },
		metrics: grpcMetrics,
	})
	add(tcase{
		name: "grpc/TestGRPCConnectionWithMetadata",
		// Lower-case keys: upstream's metadata.Pairs lower-cases them (an upper-case one is
		// refused by grpc-go's transport, status 13).
		module: grpcModule("metadata:\n  key1: [value1, value2]\n  key2-bin: [test]\n  authorization: [Bearer token]"),
		setup: func(env *caseEnv) string {
			noteMetadata := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
				md, _ := metadata.FromIncomingContext(ctx)
				env.note("key1=%q key2-bin=%q authorization=%q", md.Get("key1"), md.Get("key2-bin"), md.Get("authorization"))
				return handler(ctx, req)
			}
			return serveGRPC(env, serving, grpc.UnaryInterceptor(noteMetadata))
		},
		metrics: grpcMetrics,
	})
	multi := map[string]grpc_health_v1.HealthCheckResponse_ServingStatus{
		"service1": grpc_health_v1.HealthCheckResponse_SERVING,
		"service2": grpc_health_v1.HealthCheckResponse_NOT_SERVING,
	}
	for _, svc := range []string{"service1", "service2", "service3"} {
		add(tcase{
			name:    "grpc/TestMultipleGRPCservices/" + svc,
			module:  grpcModule("service: " + svc),
			setup:   func(env *caseEnv) string { return serveGRPC(env, multi) },
			metrics: []string{"probe_grpc_status_code"},
		})
	}
	tlsServer := func(env *caseEnv) grpc.ServerOption {
		tmpl := certTemplate(time.Now().AddDate(0, 0, 1), false)
		tmpl.IsCA = true
		key := newKey()
		_, certPEM := signCert(tmpl, nil, &key.PublicKey, key)
		return grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{keyPair(certPEM, key)}, MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS12}))
	}
	add(tcase{
		name:    "grpc/TestGRPCTLSConnection",
		module:  grpcModule("tls: true\ntls_config:\n  insecure_skip_verify: true"),
		setup:   func(env *caseEnv) string { return serveGRPC(env, serving, tlsServer(env)) },
		metrics: []string{"probe_tls_version_info{version}", "probe_grpc_ssl", "probe_grpc_status_code"},
	})
	add(tcase{
		name:    "grpc/TestNoTLSConnection",
		module:  grpcModule("tls: true\ntls_config:\n  insecure_skip_verify: true"),
		setup:   func(env *caseEnv) string { return serveGRPC(env, serving) },
		metrics: []string{"probe_grpc_ssl", "probe_grpc_status_code"},
	})
	add(tcase{
		name:    "grpc/TestGRPCServiceNotFound",
		module:  grpcModule("service: NonExistingService"),
		setup:   func(env *caseEnv) string { return serveGRPC(env, serving) },
		metrics: []string{"probe_grpc_ssl", "probe_grpc_status_code"},
	})
	add(tcase{
		name:    "grpc/TestGRPCHealthCheckUnimplemented",
		module:  grpcModule("service: NonExistingService"),
		setup:   func(env *caseEnv) string { return serveGRPC(env, nil) },
		metrics: []string{"probe_grpc_ssl", "probe_grpc_status_code"},
	})
	add(tcase{
		name:    "grpc/TestGRPCAbsentFailedTLS",
		module:  grpcModule("service: NonExistingService"),
		setup:   func(env *caseEnv) string { return "localhost:0" },
		metrics: []string{"probe_ssl_earliest_cert_expiry", "probe_tls_version_info", "probe_ssl_last_chain_info"},
	})
}
