package prober_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/libprober/prober/bindings/go/prober"
)

// Requests beyond the kubelet (issue 25), against Go's own net/http server.

func checkRequest(t *testing.T, s prober.Spec) prober.Outcome {
	t.Helper()
	o, err := prober.Check(context.Background(), s)
	if err != nil {
		t.Fatalf("Check(%+v): %v", s, err)
	}
	return o
}

// echoServer answers "METHOD LEN CONTENT-TYPE\nBODY" and redirects /redirect/N to /echo
// with status N.
func echoServer(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, r.Method+" "+r.Header.Get("Content-Length")+" "+r.Header.Get("Content-Type")+"\n"+string(body))
	})
	mux.HandleFunc("/redirect/", func(w http.ResponseWriter, r *http.Request) {
		code := strings.TrimPrefix(r.URL.Path, "/redirect/")
		status := map[string]int{"301": 301, "302": 302, "303": 303, "307": 307, "308": 308}[code]
		http.Redirect(w, r, "/echo", status)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100000")
		if r.Method != http.MethodHead {
			w.Write(make([]byte, 100000))
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestMethodAndBody(t *testing.T) {
	srv := echoServer(t)
	s := prober.HTTP(srv.URL + "/echo")
	s.Method = "POST"
	s.Body = []byte(`{"ping":1}`)
	s.Headers = []prober.Header{{Name: "Content-Type", Value: "application/json"}}
	o := checkRequest(t, s)
	if o.Result != prober.Success || string(o.Output) != "POST 10 application/json\n{\"ping\":1}" {
		t.Fatalf("POST: %+v %q", o, o.Output)
	}
	s.Body = nil
	s.Method = "PUT"
	if o := checkRequest(t, s); string(o.Output) != "PUT 0 application/json\n" {
		t.Fatalf("PUT without body: %q", o.Output)
	}
}

func TestRedirectsChangeMethodsAsNetHTTP(t *testing.T) {
	srv := echoServer(t)
	for code, want := range map[string]string{
		"301": "GET  \n", "302": "GET  \n", "303": "GET  \n",
		"307": "POST 4 \nbody", "308": "POST 4 \nbody",
	} {
		s := prober.HTTP(srv.URL + "/redirect/" + code)
		s.Method = "POST"
		s.Body = []byte("body")
		if o := checkRequest(t, s); o.Result != prober.Success || string(o.Output) != want {
			t.Errorf("%s: %+v %q, want %q", code, o, o.Output, want)
		}
	}
}

func TestHeadReadsNoBody(t *testing.T) {
	srv := echoServer(t)
	s := prober.HTTP(srv.URL + "/big")
	s.Method = "HEAD"
	if o := checkRequest(t, s); o.Result != prober.Success || len(o.Output) != 0 || o.HTTPStatus != 200 {
		t.Fatalf("HEAD: %+v", o)
	}
}

func TestMethodRefused(t *testing.T) {
	s := prober.HTTP("http://127.0.0.1:1/")
	s.Method = "GET /x"
	_, err := prober.Check(context.Background(), s)
	if err == nil || !strings.Contains(err.Error(), "invalid HTTP method") {
		t.Fatalf("bad method: %v", err)
	}
	s = prober.TCP("127.0.0.1", 1)
	s.Method = "POST"
	_, err = prober.Check(context.Background(), s)
	var pe *prober.Error
	if !errors.As(err, &pe) || pe.Code != prober.StatusWrongKind {
		t.Fatalf("method on TCP: %v", err)
	}
}
