//! What a handler is given and what it answers (a leaf: it names nothing else of the crate).

/// A request as a handler sees it. Its `Debug` prints the values of `Authorization`,
/// `Proxy-Authorization` and `Cookie` as `<secret>` (a client's credentials).
#[derive(Clone)]
pub struct Request {
    /// `GET` or `HEAD` (the server answers other methods 405 itself, but on a route that
    /// takes every method: [`crate::Server::route_deferred_any_method`]).
    pub method: String,
    /// The path, still percent-encoded, without the query.
    pub path: String,
    /// What follows `?`, still percent-encoded ("" when there is none).
    pub query: String,
    /// The headers, in their order, names as sent.
    pub headers: Vec<(String, String)>,
}

impl std::fmt::Debug for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Request")
            .field("method", &self.method)
            .field("path", &self.path)
            .field("query", &self.query)
            .field("headers", &RedactedHeaders(&self.headers))
            .finish()
    }
}

/// Header fields as `Debug` prints them, a client's credentials redacted.
struct RedactedHeaders<'a>(&'a [(String, String)]);

impl std::fmt::Debug for RedactedHeaders<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const CREDENTIALS: [&str; 3] = ["authorization", "proxy-authorization", "cookie"];
        let secret = |n: &str| CREDENTIALS.iter().any(|c| n.eq_ignore_ascii_case(c));
        f.debug_list()
            .entries(self.0.iter().map(|(n, v)| (n, if secret(n) { "<secret>" } else { v })))
            .finish()
    }
}

impl Request {
    /// The value of the first header called `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// An answer: status, content type, body, and any further headers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// The `Content-Type`.
    pub content_type: String,
    /// The body (left out for `HEAD`; its length is sent either way).
    pub body: Vec<u8>,
    /// Further headers.
    pub headers: Vec<(String, String)>,
}

impl Response {
    /// An answer with `body` of `content_type`.
    pub fn new(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Response {
        Response {
            status,
            content_type: content_type.to_string(),
            body: body.into(),
            headers: Vec::new(),
        }
    }

    /// A plain text answer (`text/plain; charset=utf-8`).
    pub fn text(status: u16, body: impl Into<Vec<u8>>) -> Response {
        Response::new(status, "text/plain; charset=utf-8", body)
    }

    /// The same answer with a further header.
    #[must_use]
    pub fn with_header(mut self, name: &str, value: &str) -> Response {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }
}

/// What answers the requests of a route. It runs on the server's thread: it must be quick
/// (encode what is there, never wait for something).
pub type Handler = Box<dyn Fn(&Request) -> Response + Send>;
