//! The health check's request, encoded once per kept connection: a check of the same spec on
//! the same connection sends the same bytes but for the stream id, so the encoded HEADERS
//! block and DATA ([`h2::EncodedRequest`]) are kept with the connection's HTTP/2 client
//! ([`Session`]) and reused while what they were made from is the same. HPACK literals without
//! indexing make the block independent of the connection's tables (nothing is inserted in the
//! server's dynamic table), so a block encoded once is valid for every stream.

use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use crate::h2::{self, EncodedRequest};
use crate::health;

/// What a check's request is made from, but for its `grpc-timeout`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RequestParts {
    /// TLS: `:scheme` `https`, else `http`.
    pub(crate) tls: bool,
    /// `:authority`.
    pub(crate) authority: String,
    /// `user-agent`.
    pub(crate) user_agent: String,
    /// Request metadata, after the protocol's own headers.
    pub(crate) metadata: Vec<(String, String)>,
    /// `HealthCheckRequest.service`.
    pub(crate) service: String,
}

impl RequestParts {
    /// The request with `grpc-timeout` `ms` milliseconds (as grpc-go writes it: in
    /// milliseconds up to 8 digits, else in seconds).
    fn encode(&self, ms: u128) -> EncodedRequest {
        let grpc_timeout =
            if ms <= 99_999_999 { format!("{ms}m") } else { format!("{}S", ms / 1000) };
        let request = h2::Request {
            method: "POST".into(),
            scheme: if self.tls { "https" } else { "http" }.into(),
            authority: self.authority.clone(),
            path: health::PATH.into(),
            headers: [
                ("content-type".to_string(), "application/grpc".to_string()),
                ("user-agent".into(), self.user_agent.clone()),
                ("te".into(), "trailers".into()),
                ("grpc-timeout".into(), grpc_timeout),
            ]
            .into_iter()
            .chain(self.metadata.iter().cloned())
            .collect(),
            body: health::encode_request(&self.service),
        };
        EncodedRequest::from_request(request)
    }
}

/// An encoded request and what it was made from.
#[derive(Debug)]
struct Cached {
    parts: RequestParts,
    ms: u128,
    encoded: Arc<EncodedRequest>,
}

/// A connection's HTTP/2 client and the last request encoded for it: what the engine keeps
/// with a kept gRPC connection. It dereferences to the client.
#[derive(Debug, Default)]
pub(crate) struct Session {
    client: h2::Client,
    request: Option<Cached>,
}

impl Session {
    /// A new connection's client, with nothing encoded yet.
    pub(crate) fn new() -> Session {
        Session::default()
    }

    /// The request of `parts` with a `grpc-timeout` of `ms`: the one encoded for an earlier
    /// check when it was made from the same, else encoded now and kept for the next check.
    pub(crate) fn request(&mut self, parts: &RequestParts, ms: u128) -> Arc<EncodedRequest> {
        match &self.request {
            Some(c) if c.ms == ms && c.parts == *parts => c.encoded.clone(),
            _ => {
                let encoded = Arc::new(parts.encode(ms));
                self.request = Some(Cached { parts: parts.clone(), ms, encoded: encoded.clone() });
                encoded
            }
        }
    }
}

impl Deref for Session {
    type Target = h2::Client;
    fn deref(&self) -> &h2::Client {
        &self.client
    }
}

impl DerefMut for Session {
    fn deref_mut(&mut self) -> &mut h2::Client {
        &mut self.client
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hpack::Decoder;

    fn parts() -> RequestParts {
        RequestParts {
            tls: false,
            authority: "127.0.0.1:50051".into(),
            user_agent: "kube-probe/1.37".into(),
            metadata: vec![("x-a".into(), "1".into())],
            service: "svc".into(),
        }
    }

    /// The block decodes to the kubelet's request, in its order, with the metadata last.
    #[test]
    fn the_encoded_request_is_the_kubelet_s() {
        let encoded = parts().encode(1000);
        let fields = Decoder::default().decode(encoded.header_block(), 1 << 16).unwrap();
        let text: Vec<(String, String)> = fields
            .into_iter()
            .map(|(n, v)| (String::from_utf8(n).unwrap(), String::from_utf8(v).unwrap()))
            .collect();
        let want = [
            (":method", "POST"),
            (":scheme", "http"),
            (":path", "/grpc.health.v1.Health/Check"),
            (":authority", "127.0.0.1:50051"),
            ("content-type", "application/grpc"),
            ("user-agent", "kube-probe/1.37"),
            ("te", "trailers"),
            ("grpc-timeout", "1000m"),
            ("x-a", "1"),
        ];
        let want: Vec<(String, String)> =
            want.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect();
        assert_eq!(text, want);
        assert_eq!(encoded.body(), health::encode_request("svc"));
        let long = parts().encode(100_000_000);
        assert!(long.header_block().windows(7).any(|w| w == b"100000S"));
    }

    /// The same parts and timeout reuse the encoded request; any difference encodes anew.
    #[test]
    fn a_session_reuses_its_request_only_for_the_same_parts() {
        let mut s = Session::new();
        let first = s.request(&parts(), 1000);
        assert!(Arc::ptr_eq(&first, &s.request(&parts(), 1000)));
        let other_timeout = s.request(&parts(), 999);
        assert!(!Arc::ptr_eq(&first, &other_timeout));
        assert!(other_timeout.header_block().windows(4).any(|w| w == b"999m"));
        let mut changed = parts();
        changed.metadata.push(("x-b".into(), "2".into()));
        let with_more = s.request(&changed, 999);
        assert!(!Arc::ptr_eq(&other_timeout, &with_more));
        assert_eq!(*with_more, changed.encode(999));
        let tls = RequestParts { tls: true, ..parts() };
        assert_ne!(*s.request(&tls, 999), parts().encode(999));
    }
}
