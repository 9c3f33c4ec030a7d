package parity

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/protobuf/proto"
)

// grpcHealthServer is grpc-go's own health server: "" and "up" SERVING, "down" NOT_SERVING,
// "unknown" SERVICE_UNKNOWN; other names are NotFound. withHealth false: a gRPC server without
// the health service.
func grpcHealthServer(t *testing.T, withHealth bool) int {
	return grpcHealthServerOn(t, "tcp4", "127.0.0.1:0", withHealth)
}

// grpcHealthServerOn is grpcHealthServer listening on network and address (":0": every
// address, both families, for the probes of an empty host).
func grpcHealthServerOn(t *testing.T, network, address string, withHealth bool) int {
	ln, err := net.Listen(network, address)
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	if withHealth {
		hs := health.NewServer()
		hs.SetServingStatus("up", healthpb.HealthCheckResponse_SERVING)
		hs.SetServingStatus("down", healthpb.HealthCheckResponse_NOT_SERVING)
		hs.SetServingStatus("unknown", healthpb.HealthCheckResponse_SERVICE_UNKNOWN)
		healthpb.RegisterHealthServer(s, hs)
	}
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(s.Stop)
	return ln.Addr().(*net.TCPAddr).Port
}

// h2Step is one thing a hand-made h2c server does after it has read the request's HEADERS.
type h2Step struct {
	headers  []string // name, value pairs: a HEADERS frame
	endStrm  bool     // END_STREAM on the HEADERS or DATA frame
	data     []byte   // a DATA frame
	rst      http2.ErrCode
	goaway   bool
	raw      []byte // bytes written as they are
	stall    bool   // send nothing more until the client closes
	noHeader bool   // (on the first step) do not send SETTINGS at all
}

func grpcMsg(status healthpb.HealthCheckResponse_ServingStatus) []byte {
	b, _ := proto.Marshal(&healthpb.HealthCheckResponse{Status: status})
	return grpcFrame(0, b)
}

func grpcFrame(flag byte, b []byte) []byte {
	out := make([]byte, 5, 5+len(b))
	out[0] = flag
	binary.BigEndian.PutUint32(out[1:], uint32(len(b)))
	return append(out, b...)
}

// h2cServer writes hand-made HTTP/2 frames: SETTINGS, then, once the client's request HEADERS
// arrived, the steps on stream 1.
func h2cServer(t *testing.T, steps []h2Step) int {
	return acceptEach(t, "tcp4", func(c net.Conn) { h2cConn(c, steps) })
}

func h2cConn(c net.Conn, steps []h2Step) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(connBound))
	drain := func() { _, _ = io.Copy(io.Discard, c) }
	if len(steps) > 0 && steps[0].noHeader {
		if steps[0].raw != nil {
			_, _ = c.Write(steps[0].raw)
		}
		if steps[0].stall {
			drain()
		}
		return
	}
	preface := make([]byte, len(http2.ClientPreface))
	if _, err := io.ReadFull(c, preface); err != nil {
		return
	}
	fr := http2.NewFramer(c, c)
	if err := fr.WriteSettings(); err != nil {
		return
	}
	// Read until the request's HEADERS on a stream, acknowledging the client's SETTINGS.
	var stream uint32
	for stream == 0 {
		f, err := fr.ReadFrame()
		if err != nil {
			return
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				_ = fr.WriteSettingsAck()
			}
		case *http2.HeadersFrame:
			stream = f.StreamID
		}
	}
	var hbuf bytes.Buffer
	enc := hpack.NewEncoder(&hbuf)
	for _, s := range steps {
		switch {
		case s.headers != nil:
			hbuf.Reset()
			for i := 0; i+1 < len(s.headers); i += 2 {
				_ = enc.WriteField(hpack.HeaderField{Name: s.headers[i], Value: s.headers[i+1]})
			}
			_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: stream, BlockFragment: hbuf.Bytes(), EndHeaders: true, EndStream: s.endStrm})
		case s.data != nil:
			_ = fr.WriteData(stream, s.endStrm, s.data)
		case s.rst != 0:
			_ = fr.WriteRSTStream(stream, s.rst)
		case s.goaway:
			_ = fr.WriteGoAway(0, http2.ErrCodeNo, nil)
		case s.raw != nil:
			_, _ = c.Write(s.raw)
		case s.stall:
			drain()
			return
		}
	}
	// Keep reading (and so keep the connection) until the client closes it.
	for {
		if _, err := fr.ReadFrame(); err != nil {
			return
		}
	}
}

var grpcOKHead = []string{":status", "200", "content-type", "application/grpc"}

func grpcTrailers(code, msg string) h2Step {
	h := []string{"grpc-status", code}
	if msg != "" {
		h = append(h, "grpc-message", msg)
	}
	return h2Step{headers: h, endStrm: true}
}

func grpcTarget(port int, service string, timeout time.Duration) *target {
	return &target{kind: kindGRPC, host: "127.0.0.1", port: port, service: service, timeout: timeout}
}
