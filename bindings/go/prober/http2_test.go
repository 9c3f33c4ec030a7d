package prober_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/libprober/prober/bindings/go/prober"
)

// protoHandler answers with the protocol the server saw (HTTP/1.1 or HTTP/2.0).
var protoHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	_, _ = io.WriteString(w, r.Proto)
})

func checkProto(t *testing.T, what string, s prober.Spec, want string) {
	t.Helper()
	o, err := prober.Check(context.Background(), s)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if o.Result != prober.Success || string(o.Output) != want {
		t.Fatalf("%s: %v %q (%s), want success %q", what, o.Result, o.Output, o.Message, want)
	}
}

func TestHTTPSNegotiatesH2(t *testing.T) {
	srv := httptest.NewUnstartedServer(protoHandler)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()

	checkProto(t, "default", prober.HTTP(srv.URL+"/"), "HTTP/2.0")
	s := prober.HTTP(srv.URL + "/")
	s.HTTPVersion = prober.HTTP1
	checkProto(t, "HTTP1", s, "HTTP/1.1")
}

func TestH2CPriorKnowledge(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: protoHandler, Protocols: new(http.Protocols)}
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetUnencryptedHTTP2(true)
	go func() { _ = srv.Serve(l) }()
	defer srv.Close()
	url := "http://" + l.Addr().String() + "/"

	checkProto(t, "default", prober.HTTP(url), "HTTP/1.1")
	s := prober.HTTP(url)
	s.HTTPVersion = prober.H2C
	checkProto(t, "H2C", s, "HTTP/2.0")

	s = prober.HTTP("https://127.0.0.1:1/")
	s.HTTPVersion = prober.H2C
	_, err = prober.Check(context.Background(), s)
	wantError(t, "H2C on https", err, prober.StatusInvalid, "only supported with http:// URLs")
	s.HTTPVersion = 7
	_, err = prober.Check(context.Background(), s)
	wantError(t, "HTTPVersion 7", err, prober.StatusInvalidEnum, "HTTPVersion 7 is not HTTPAuto, HTTP1 or H2C")
	s = prober.TCP("127.0.0.1", 1)
	s.HTTPVersion = prober.HTTP1
	_, err = prober.Check(context.Background(), s)
	wantError(t, "HTTPVersion on TCP", err, prober.StatusWrongKind, "HTTP probes only")
}
