//! A sans-I/O HTTP/2 client (RFC 9113) and HPACK (RFC 7541) for libprober's probes.
//!
//! - [`frame`]: the connection preface, frame types, flags, settings and the frame header;
//! - [`hpack`]: response header block decoding (static and dynamic tables, Huffman) and the
//!   literal encoding requests need;
//! - [`client`]: a client connection for one request on stream 1 (preface, SETTINGS and ACK,
//!   HEADERS/CONTINUATION, DATA with flow control, PING, WINDOW_UPDATE, RST_STREAM, GOAWAY),
//!   with a per-call budget of frames and bytes against hostile servers.
//!
//! Nothing here does I/O: the owner feeds received bytes to [`client::Client::process`] and
//! writes what [`client::Client`] queues, over whatever transport it has (the gRPC probe
//! drives it over `prober_transport`, plain or TLS). The crate is the one HTTP/2 of libprober,
//! so that every probe speaking HTTP/2 shares it.
//!
//! Hand-written rather than the `h2` crate: `h2` is built on tokio's I/O traits and its own
//! task wake-ups, while libprober's engine drives every probe from one poll loop through a
//! sans-I/O state machine with a per-turn budget (see `prober_io::Machine`).

#![warn(missing_docs)]

pub mod client;
pub mod frame;
pub mod hpack;

// The README's examples are compiled and run with the doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
