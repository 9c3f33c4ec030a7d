//! [`TokenServer`]: an OAuth 2 authorization server (client credentials grant) and a resource
//! it protects, on loopback, for the tests of OAuth 2 probes.
//!
//! - `POST /token`: checks the client's credentials, from `Authorization: Basic` (id and
//!   secret URL-encoded, as RFC 6749 2.3.1 and golang.org/x/oauth2 have them) or from the
//!   form's `client_id` / `client_secret`, as [`Accept`] allows; answers
//!   `{"access_token": TOKEN, "token_type": "bearer", "expires_in": 3600}`, or 401
//!   `{"error": "invalid_client"}`.
//! - `/protected`: 200 `ok` with `Authorization: Bearer TOKEN`, else 401 `unauthorized`.
//! - anything else: 404.
//!
//! Every request is recorded ([`TokenServer::requests`]). One request per connection; bodies
//! of at most 64 KiB.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use base64::Engine as _;

/// Where the token endpoint takes the client's credentials from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accept {
    /// The `Authorization: Basic` header or the form (what most servers do).
    Either,
    /// The form's parameters only: a Basic header is refused with 401.
    FormOnly,
}

/// One request as the server read it.
#[derive(Clone, Debug, Default)]
pub struct Recorded {
    /// `POST /token`, ...
    pub method: String,
    /// The path, query included.
    pub path: String,
    /// The header fields, in order.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: String,
}

impl Recorded {
    /// The value of the first header called `name` (ASCII case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The form's (the body's) value of `key`, decoded.
    pub fn form(&self, key: &str) -> Option<String> {
        form_pairs(&self.body).into_iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

struct Config {
    client_id: String,
    secret: String,
    token: String,
    accept: Accept,
}

/// The server (see the module docs); stopped when dropped.
#[derive(Debug)]
pub struct TokenServer {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<Recorded>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl TokenServer {
    /// Starts a server on 127.0.0.1 granting `token` to `client_id` with `secret`.
    ///
    /// # Panics
    ///
    /// When it cannot listen.
    pub fn start(client_id: &str, secret: &str, token: &str, accept: Accept) -> TokenServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the token server");
        let addr = listener.local_addr().expect("its address");
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let config = Arc::new(Config {
            client_id: client_id.into(),
            secret: secret.into(),
            token: token.into(),
            accept,
        });
        let (r, s) = (requests.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if s.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let (r, c) = (r.clone(), config.clone());
                std::thread::spawn(move || serve(conn, &c, &r));
            }
        });
        TokenServer { addr, requests, stop, thread: Some(thread) }
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// `http://127.0.0.1:PORT` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The requests read so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Drop for TokenServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accepting thread, which then sees the flag.
        let _ = TcpStream::connect(self.addr);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(mut conn: TcpStream, c: &Config, log: &Mutex<Vec<Recorded>>) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(10)));
    let Some(req) = read_request(&mut conn) else { return };
    let (status, content_type, body) = answer(&req, c);
    log.lock().unwrap_or_else(|e| e.into_inner()).push(req);
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = conn.write_all(head.as_bytes());
    let _ = conn.write_all(body.as_bytes());
    let _ = conn.shutdown(Shutdown::Write);
    // Drains what the client still sends, so that it sees FIN rather than a reset.
    let _ = std::io::copy(&mut conn.take(1 << 16), &mut std::io::sink());
}

fn answer(req: &Recorded, c: &Config) -> (&'static str, &'static str, String) {
    let path = req.path.split('?').next().unwrap_or("");
    match path {
        "/token" => {
            let basic = req.header("Authorization").and_then(basic_credentials);
            let form = (req.form("client_id"), req.form("client_secret"));
            let granted = match (basic, form) {
                (Some(_), _) if c.accept == Accept::FormOnly => false,
                (Some((id, secret)), _) => id == c.client_id && secret == c.secret,
                (None, (Some(id), secret)) => {
                    id == c.client_id && secret.unwrap_or_default() == c.secret
                }
                (None, (None, _)) => false,
            };
            if req.method != "POST" || req.form("grant_type").is_none() {
                ("400 Bad Request", "application/json", r#"{"error":"invalid_request"}"#.into())
            } else if granted {
                let body = format!(
                    r#"{{"access_token":"{}","token_type":"bearer","expires_in":3600}}"#,
                    c.token
                );
                ("200 OK", "application/json", body)
            } else {
                ("401 Unauthorized", "application/json", r#"{"error":"invalid_client"}"#.into())
            }
        }
        "/protected" => {
            if req.header("Authorization") == Some(&format!("Bearer {}", c.token)) {
                ("200 OK", "text/plain", "ok".into())
            } else {
                ("401 Unauthorized", "text/plain", "unauthorized".into())
            }
        }
        _ => ("404 Not Found", "text/plain", "not found".into()),
    }
}

/// Reads one request: the head, then a `Content-Length` body of at most 64 KiB.
fn read_request(conn: &mut TcpStream) -> Option<Recorded> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        if buf.len() > 1 << 16 {
            return None;
        }
        let n = conn.read(&mut chunk).ok().filter(|&n| n > 0)?;
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let (method, path) = (first.next()?.to_string(), first.next()?.to_string());
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
        .collect();
    let len: usize = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0)
        .min(1 << 16);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < len {
        let n = conn.read(&mut chunk).ok().filter(|&n| n > 0)?;
        body.extend_from_slice(&chunk[..n]);
    }
    body.truncate(len);
    Some(Recorded { method, path, headers, body: String::from_utf8_lossy(&body).into_owned() })
}

/// `Basic base64(urlencoded id : urlencoded secret)`, decoded.
fn basic_credentials(value: &str) -> Option<(String, String)> {
    let b64 = value.strip_prefix("Basic ")?;
    let raw = base64::engine::general_purpose::STANDARD.decode(b64).ok()?;
    let raw = String::from_utf8(raw).ok()?;
    let (id, secret) = raw.split_once(':')?;
    Some((form_decode(id)?, form_decode(secret)?))
}

fn form_pairs(body: &str) -> Vec<(String, String)> {
    body.split('&')
        .filter(|p| !p.is_empty())
        .filter_map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            Some((form_decode(k)?, form_decode(v)?))
        })
        .collect()
}

/// `+` as a space, `%XX` as a byte.
fn form_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 2;
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}
