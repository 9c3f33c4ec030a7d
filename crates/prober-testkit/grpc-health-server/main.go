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
//	-listen ADDR         listen on this TCP address instead of 127.0.0.1:0 (e.g. "[::]:0")
//	-http                serve Go's net/http instead (http_server.go): HTTP/1.1 and h2c, or
//	                     with -tls-cert/-tls-key HTTP/1.1 and h2 by ALPN
//	-unix PATH           listen on the Unix socket PATH instead ("@NAME": Linux's abstract
//	                     NAME); the first line of stdout is then 0
//
// Commands, one a line on stdin, each answered by one line on stdout (gRPC mode, for the
// keep-alive tests):
//
//	conns    the number of connections accepted so far
//	checks   the number of RPCs received so far
//	goaway   a graceful stop (GOAWAY on every connection, which then closes), and a new
//	         server on the same address; answers "ok" once it listens again
//	hang     every later Check blocks, never answering (until "answer"); answers "ok"
//	answer   Checks answer again; answers "ok"
//	reset    resets every open connection (RST: linger 0); answers how many
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
	"sync"
	"sync/atomic"
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

// hub accepts the connections of the one real listener and hands them to the listener views
// servers are serving (only the newest takes new ones); it counts and remembers them, for
// "conns" and "reset".
type hub struct {
	real     net.Listener
	conns    chan net.Conn
	mu       sync.Mutex
	accepted int
	open     []net.Conn
}

func (h *hub) run() {
	for {
		c, err := h.real.Accept()
		if err != nil {
			close(h.conns)
			return
		}
		h.mu.Lock()
		h.accepted++
		h.open = append(h.open, c)
		h.mu.Unlock()
		h.conns <- c
	}
}

// resetAll resets every connection accepted so far and returns how many.
func (h *hub) resetAll() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := len(h.open)
	for _, c := range h.open {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		_ = c.Close()
	}
	h.open = nil
	return n
}

// view is one server's listener on the hub: closing it (a server's GracefulStop) leaves the
// real listener open for the next server.
type view struct {
	h    *hub
	done chan struct{}
	once sync.Once
}

func (h *hub) view() *view { return &view{h: h, done: make(chan struct{})} }

func (v *view) Accept() (net.Conn, error) {
	select {
	case c, ok := <-v.h.conns:
		if !ok {
			return nil, net.ErrClosed
		}
		return c, nil
	case <-v.done:
		return nil, net.ErrClosed
	}
}

func (v *view) Close() error   { v.once.Do(func() { close(v.done) }); return nil }
func (v *view) Addr() net.Addr { return v.h.real.Addr() }

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
	listen := flag.String("listen", "127.0.0.1:0", "TCP address to listen on")
	var required statusFlags
	flag.Var(&required, "require-metadata", "KEY=VALUE the request must carry (repeatable)")
	requireAuthority := flag.String("require-authority", "", "required :authority")
	flag.Parse()

	network, address := "tcp", *listen
	if *unixPath != "" {
		network, address = "unix", *unixPath
	}
	real, err := net.Listen(network, address)
	if err != nil {
		fail("listen: %v", err)
	}
	conns := &hub{real: real, conns: make(chan net.Conn)}
	go conns.run()
	lis := conns.view()
	// "hang": Checks wait on this channel until "answer" closes it.
	var checks atomic.Int64
	var hangMu sync.Mutex
	var hang chan struct{}

	var serve, goaway func()
	var register func(*grpc.Server)
	if *httpMode {
		serve = httpServe(lis, *certFile, *keyFile)
	} else if *http1 {
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
			checks.Add(1)
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
			hangMu.Lock()
			h := hang
			hangMu.Unlock()
			if h != nil {
				<-h
			}
			return handler(ctx, req)
		}))
		newServer := func() *grpc.Server {
			srv := grpc.NewServer(opts...)
			register(srv)
			return srv
		}
		register = func(srv *grpc.Server) {
			if *noHealth {
				return
			}
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
		srv := newServer()
		first, firstLis := srv, lis
		serve = func() { _ = first.Serve(firstLis) }
		goaway = func() {
			// The new server takes new connections first; the old one drains its own in
			// the background (GracefulStop waits for its connections to end).
			old := srv
			lis = conns.view()
			srv = newServer()
			go func(srv *grpc.Server, lis net.Listener) { _ = srv.Serve(lis) }(srv, lis)
			go old.GracefulStop()
		}
	}

	if tcp, ok := lis.Addr().(*net.TCPAddr); ok {
		fmt.Println(tcp.Port)
	} else {
		fmt.Println(0)
	}
	go serve()
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		switch in.Text() {
		case "conns":
			conns.mu.Lock()
			fmt.Println(conns.accepted)
			conns.mu.Unlock()
		case "checks":
			fmt.Println(checks.Load())
		case "goaway":
			if goaway != nil {
				goaway()
			}
			fmt.Println("ok")
		case "hang":
			hangMu.Lock()
			if hang == nil {
				hang = make(chan struct{})
			}
			hangMu.Unlock()
			fmt.Println("ok")
		case "answer":
			hangMu.Lock()
			if hang != nil {
				close(hang)
				hang = nil
			}
			hangMu.Unlock()
			fmt.Println("ok")
		case "reset":
			fmt.Println(conns.resetAll())
		default:
			fmt.Println("unknown command")
		}
	}
	os.Exit(0)
}
