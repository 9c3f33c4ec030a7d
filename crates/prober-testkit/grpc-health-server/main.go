// health-server: a gRPC server with grpc-go's own health service, for libprober's tests and
// benchmarks (crates/prober-testkit, module grpc, runs it; ci/bench.sh builds it for grpc_oneshot).
//
// It listens on 127.0.0.1:0, prints the bound port alone on the first line of stdout, and
// serves until its stdin reaches EOF (then it exits 0).
//
// Flags:
//
//	-status NAME=STATUS  set the health status of service NAME (repeatable; STATUS is SERVING,
//	                     NOT_SERVING, SERVICE_UNKNOWN or UNKNOWN; NAME may be empty). The
//	                     health server starts with "" SERVING, as grpc-go's does.
//	-no-health           do not register the health service (Check is Unimplemented)
//	-delay DURATION      sleep this long in every Check before answering
//	-require-user-agent PREFIX
//	                     answer PermissionDenied unless the user-agent starts with PREFIX
//	-tls-cert FILE -tls-key FILE
//	                     serve TLS with this certificate chain and key (PEM)
//	-client-ca FILE      with TLS: require a client certificate signed by this CA (PEM)
//	-http1               serve plain HTTP/1.1 (200 "ok" for every request; on /echo,
//	                     "METHOD HOST PATH") instead of gRPC
//	-require-metadata KEY=VALUE
//	                     answer Unauthenticated ("missing metadata KEY: 100% denied") unless
//	                     the request has KEY with VALUE (repeatable; a -bin key's VALUE is the
//	                     decoded bytes)
//	-require-authority VALUE
//	                     answer PermissionDenied unless :authority is VALUE
//	-unix PATH           listen on the Unix socket PATH instead ("@NAME": Linux's abstract
//	                     NAME); the first line of stdout is then 0
package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

type statusFlags []string

func (s *statusFlags) String() string     { return strings.Join(*s, ",") }
func (s *statusFlags) Set(v string) error { *s = append(*s, v); return nil }

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "health-server: "+format+"\n", args...)
	os.Exit(64)
}

func main() {
	var statuses statusFlags
	flag.Var(&statuses, "status", "NAME=STATUS (repeatable)")
	noHealth := flag.Bool("no-health", false, "do not register the health service")
	delay := flag.Duration("delay", 0, "sleep this long in every Check")
	requireUA := flag.String("require-user-agent", "", "required user-agent prefix")
	certFile := flag.String("tls-cert", "", "TLS certificate chain (PEM)")
	keyFile := flag.String("tls-key", "", "TLS private key (PEM)")
	clientCA := flag.String("client-ca", "", "CA for client certificates (PEM)")
	http1 := flag.Bool("http1", false, "serve plain HTTP/1.1 instead of gRPC")
	unixPath := flag.String("unix", "", "listen on this Unix socket (@NAME: abstract)")
	var required statusFlags
	flag.Var(&required, "require-metadata", "KEY=VALUE the request must carry (repeatable)")
	requireAuthority := flag.String("require-authority", "", "required :authority")
	flag.Parse()

	network, address := "tcp", "127.0.0.1:0"
	if *unixPath != "" {
		network, address = "unix", *unixPath
	}
	lis, err := net.Listen(network, address)
	if err != nil {
		fail("listen: %v", err)
	}

	var serve func()
	if *http1 {
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/echo" {
				io.WriteString(w, r.Method+" "+r.Host+" "+r.URL.Path)
				return
			}
			io.WriteString(w, "ok")
		})}
		serve = func() { _ = srv.Serve(lis) }
	} else {
		var opts []grpc.ServerOption
		if *certFile != "" || *keyFile != "" {
			cert, err := tls.LoadX509KeyPair(*certFile, *keyFile)
			if err != nil {
				fail("TLS key pair: %v", err)
			}
			cfg := &tls.Config{Certificates: []tls.Certificate{cert}}
			if *clientCA != "" {
				pem, err := os.ReadFile(*clientCA)
				if err != nil {
					fail("client CA: %v", err)
				}
				pool := x509.NewCertPool()
				if !pool.AppendCertsFromPEM(pem) {
					fail("client CA: no certificate in %s", *clientCA)
				}
				cfg.ClientCAs = pool
				cfg.ClientAuth = tls.RequireAndVerifyClientCert
			}
			opts = append(opts, grpc.Creds(credentials.NewTLS(cfg)))
		}
		opts = append(opts, grpc.UnaryInterceptor(func(ctx context.Context, req any,
			info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
			if *requireUA != "" {
				md, _ := metadata.FromIncomingContext(ctx)
				ua := strings.Join(md.Get("user-agent"), ",")
				if !strings.HasPrefix(ua, *requireUA) {
					return nil, status.Errorf(codes.PermissionDenied, "user-agent %q", ua)
				}
			}
			md, _ := metadata.FromIncomingContext(ctx)
			for _, kv := range required {
				k, v, _ := strings.Cut(kv, "=")
				got := md.Get(k)
				if len(got) == 0 || got[0] != v {
					// A message with characters grpc-message must percent-encode.
					return nil, status.Errorf(codes.Unauthenticated, "missing metadata %s: 100%% denied", k)
				}
			}
			if *requireAuthority != "" {
				if got := md.Get(":authority"); len(got) == 0 || got[0] != *requireAuthority {
					return nil, status.Errorf(codes.PermissionDenied, "authority %q", got)
				}
			}
			if *delay > 0 {
				time.Sleep(*delay)
			}
			return handler(ctx, req)
		}))
		srv := grpc.NewServer(opts...)
		if !*noHealth {
			hs := health.NewServer()
			for _, s := range statuses {
				name, st, ok := strings.Cut(s, "=")
				if !ok {
					fail("-status %q: expected NAME=STATUS", s)
				}
				v, ok := healthpb.HealthCheckResponse_ServingStatus_value[st]
				if !ok {
					fail("-status %q: unknown status %q", s, st)
				}
				hs.SetServingStatus(name, healthpb.HealthCheckResponse_ServingStatus(v))
			}
			healthpb.RegisterHealthServer(srv, hs)
		}
		serve = func() { _ = srv.Serve(lis) }
	}

	if tcp, ok := lis.Addr().(*net.TCPAddr); ok {
		fmt.Println(tcp.Port)
	} else {
		fmt.Println(0)
	}
	go serve()
	_, _ = io.Copy(io.Discard, bufio.NewReader(os.Stdin))
	os.Exit(0)
}
