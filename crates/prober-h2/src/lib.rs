//! A sans-I/O HTTP/2 client (RFC 9113) and HPACK (RFC 7541) for libprober's probes.
//!
//! - [`frame`]: the connection preface, frame types, flags, settings and the frame header;
//! - [`hpack`]: response header block decoding (static and dynamic tables, Huffman) and the
//!   literal encoding requests need;
//! - [`client`]: a client connection that carries requests over its life, one stream each
//!   (preface, SETTINGS and ACK, stream ids, HEADERS/CONTINUATION, DATA with connection and
//!   stream flow control, PING, WINDOW_UPDATE, RST_STREAM, GOAWAY), with a per-call budget of
//!   frames and bytes against hostile servers. Its API is listed in the module docs: a request
//!   is pseudo-headers, header fields and an optional body; a response is a status, header
//!   fields, body chunks and trailers.
//!
//! Nothing here does I/O: the owner feeds received bytes to [`client::Client::push`] and
//! [`client::Client::process`] and writes what [`client::Client`] queues, over whatever
//! transport it has (the gRPC probe drives it over `prober_transport`, plain or TLS, and keeps
//! it with a kept connection between runs). The crate is the one HTTP/2 of libprober, so that
//! every probe speaking HTTP/2 (gRPC, HTTPS over h2, h2c) shares it.
//!
//! # Why not the `h2` crate, or an HPACK crate
//!
//! `h2` is a complete and well-tested HTTP/2, but its connection is driven through tokio's
//! `AsyncRead`/`AsyncWrite` and its own task wake-ups (`poll_*` with a `Context`): its state
//! lives behind the I/O, and it has no per-turn bound on the frames one call handles.
//! libprober's engine drives every probe from one mio poll loop through a sans-I/O state
//! machine (`prober_io::Machine`) with a per-turn budget, keeps idle connections in its own
//! store, and must stay small (the `prober` binary has a size limit): bridging `h2` would mean
//! a fake waker and an in-memory duplex stream per connection, plus tokio's I/O crates, for
//! less control. `hpack` (unmaintained since 2016) and `fluke-hpack` (its fork) decode
//! without a bound on the decoded header list and without the error texts the probes quote;
//! the decoder here is about 700 lines with the RFC's test vectors, and the fuzz targets
//! (`fuzz/fuzz_targets/h2_frames.rs`, `h2_client.rs`, `grpc_response.rs`) drive it and the
//! client's state machine.

#![warn(missing_docs)]

pub mod client;
pub mod frame;
pub mod hpack;

// The README's examples are compiled and run with the doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
