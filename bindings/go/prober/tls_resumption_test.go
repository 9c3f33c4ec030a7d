package prober_test

import (
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/libprober/prober/bindings/go/prober"
)

// TLSOptions.Resumption against Go's crypto/tls server, which says whether each handshake
// resumed (ConnectionState.DidResume): an engine target with it resumes from its second run
// on, over TLS 1.3 and TLS 1.2, and reports the certificate its first run saw; without it
// (the default) none does.
func TestTLSResumption(t *testing.T) {
	for _, version := range []uint16{tls.VersionTLS13, tls.VersionTLS12} {
		for _, on := range []bool{true, false} {
			cert, ca := selfSigned(t, "resume.internal")
			var mu sync.Mutex
			var resumed []bool
			ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{
				Certificates: []tls.Certificate{cert},
				MinVersion:   version,
				MaxVersion:   version,
			})
			if err != nil {
				t.Fatal(err)
			}
			srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				resumed = append(resumed, r.TLS.DidResume)
				mu.Unlock()
				w.Header().Set("Connection", "close")
			})}
			go srv.Serve(ln)

			e, err := prober.NewEngine(prober.WithEveryRun())
			if err != nil {
				t.Fatal(err)
			}
			target, _ := e.AddTarget()
			s := prober.HTTP("https://" + ln.Addr().(*net.TCPAddr).String() + "/")
			s.TLS = &prober.TLSOptions{CAFile: ca, ServerName: "resume.internal", Resumption: on}
			s.Period = 10 * time.Minute
			if err := e.SetProbe(target, prober.Readiness, s); err != nil {
				t.Fatal(err)
			}
			runOf := func(ev prober.Event) bool { return ev.Kind == prober.EventRun && ev.Target == target }
			var first prober.Outcome
			for i := 0; i < 3; i++ {
				if i > 0 {
					if err := e.Trigger(target, prober.Readiness); err != nil {
						t.Fatal(err)
					}
				}
				ev := next(t, e, 10*time.Second, runOf)
				if ev.Result != prober.Success || ev.Outcome.CertNotAfter.IsZero() || ev.Outcome.TLSVersion != version {
					t.Fatalf("run %d (version %#x, resumption %v): %+v", i, version, on, ev)
				}
				if i == 0 {
					first = ev.Outcome
				} else if !ev.Outcome.CertNotAfter.Equal(first.CertNotAfter) {
					t.Fatalf("run %d's certificate expiry %v, the first run's %v", i, ev.Outcome.CertNotAfter, first.CertNotAfter)
				}
			}
			e.Close()
			srv.Close()
			mu.Lock()
			want := []bool{false, on, on}
			if len(resumed) != 3 || resumed[0] != want[0] || resumed[1] != want[1] || resumed[2] != want[2] {
				t.Errorf("version %#x, resumption %v: resumed %v, want %v", version, on, resumed, want)
			}
			mu.Unlock()
		}
	}
}
