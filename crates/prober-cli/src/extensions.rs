//! What the `check` flags of the extensions beyond the kubelet (see "Beyond the kubelet" in
//! `docs/semantics.md`) make of the probe once the target is known: `--expect-status`,
//! `--expect-body`, the CEL flags, `--keep-alive`, `--max-redirects`, `--cookies`,
//! `--compression`, the proxy flags, `--send`/`--expect` and their steps, curl's `-X` and `-d`,
//! gRPC's request flags and the connection's (`--netns`, `-4`/`-6`, `--source-address`). The
//! flags themselves are declared in `check_flags.rs`; the watch-file fields of the same
//! extensions are prober-k8s's.

use prober::{
    BodyCel, CelMode, HttpVersion, IpFamily, Pattern, ProbeKind, ProbeSpec, SpecError, StatusSet,
    TcpStep, UnixSocket, unescape,
};

use crate::args::{Failure, Parser};

/// The extension flags of `prober check`, as given (by the table of `check_flags.rs`).
#[derive(Debug, Default)]
pub struct CheckFlags {
    pub expect_status: Option<String>,
    pub expect_body: Option<String>,
    /// `--fail-if-body-cel EXPR` and `--expect-body-cel EXPR` (blackbox_exporter's
    /// `fail_if_body_json_matches_cel` and `fail_if_body_json_not_matches_cel`).
    pub fail_if_body_cel: Option<String>,
    pub expect_body_cel: Option<String>,
    pub send: Option<String>,
    pub expect: Option<String>,
    pub keep_alive: bool,
    /// `--max-redirects N`, as given.
    pub max_redirects: Option<String>,
    /// `--cookies`: a cookie jar for the run.
    pub cookies: bool,
    /// `--compression CODING`.
    pub compression: Option<prober::Compression>,
    /// curl's `-x/--proxy`, `--proxy-header` (repeated) and `--noproxy`.
    pub proxy: Option<String>,
    pub proxy_headers: Vec<String>,
    pub noproxy: Option<String>,
    pub method: Option<String>,
    pub data: Option<String>,
    pub unix_socket: Option<String>,
    pub abstract_unix_socket: Option<String>,
    pub rpc_headers: Vec<String>,
    pub user_agent: Option<String>,
    pub authority: Option<String>,
    /// curl's `--http1.1` or `--http2-prior-knowledge`, the last one given.
    pub http_version: Option<(&'static str, HttpVersion)>,
    pub netns: Option<String>,
    /// `--source-address ADDR`, as given.
    pub source_address: Option<String>,
    /// curl's `-4` / `-6`, or `--prefer-ipv4` / `--prefer-ipv6`: the last one given.
    pub ip_family: Option<IpFamily>,
    /// `--send`, `--expect` and `--send-template` in command-line order (steps, see
    /// [`CheckFlags::steps`]).
    pub exchange: Vec<(&'static str, String)>,
    /// How many of `exchange` came before each `--starttls`.
    pub starttls_at: Vec<usize>,
}

impl CheckFlags {
    /// `--send`, `--expect` or `--send-template` (`name`) with its value, in order.
    pub fn exchange(&mut self, name: &'static str, v: String) -> Result<(), Failure> {
        match name {
            "--send" => self.send = Some(v.clone()),
            "--expect" => self.expect = Some(v.clone()),
            _ => {}
        }
        self.exchange.push((name, v));
        Ok(())
    }

    /// Records where `--starttls` came among `--send`/`--expect` (for steps).
    pub fn note_starttls(&mut self) {
        self.starttls_at.push(self.exchange.len());
    }

    /// Whether `--send`/`--expect` make steps: either given twice, or a `--send-template`.
    /// Otherwise one `--send` and one `--expect` keep their single-exchange meaning (the data
    /// sent first, then the whole reply matched), whatever their order.
    fn is_steps(&self) -> bool {
        let count = |name: &str| self.exchange.iter().filter(|(n, _)| *n == name).count();
        count("--send") > 1 || count("--expect") > 1 || count("--send-template") > 0
    }

    /// The steps, in command-line order: `--expect RE` reads lines until one matches,
    /// `--send DATA` writes DATA, `--send-template T` right after an `--expect` writes T with
    /// that match's groups (`${1}`), `--starttls` shakes hands with TLS where it stands.
    fn steps(&self, args: &Parser) -> Result<Vec<TcpStep>, Failure> {
        let mut steps: Vec<TcpStep> = Vec::new();
        for (i, (name, v)) in self.exchange.iter().enumerate() {
            for _ in self.starttls_at.iter().filter(|at| **at == i) {
                steps.push(TcpStep::starttls());
            }
            match *name {
                "--expect" => {
                    let p = Pattern::new(v).map_err(|e| args.usage(format!("--expect: {e}")))?;
                    steps.push(TcpStep::expect(p));
                }
                "--send" => {
                    let data = unescape(v).map_err(|e| args.usage(format!("--send: {e}")))?;
                    steps.push(TcpStep::send(data));
                }
                _ => {
                    let data =
                        unescape(v).map_err(|e| args.usage(format!("--send-template: {e}")))?;
                    match steps.last_mut() {
                        Some(last)
                            if last.expect.is_some() && last.send.is_empty() && !last.starttls =>
                        {
                            last.send = data;
                            last.expand = true;
                        }
                        _ => {
                            return Err(args.usage(
                                "--send-template must follow an --expect (its groups fill the template)",
                            ));
                        }
                    }
                }
            }
        }
        for _ in self.starttls_at.iter().filter(|at| **at == self.exchange.len()) {
            steps.push(TcpStep::starttls());
        }
        Ok(steps)
    }

    /// The socket of curl's `--unix-socket PATH` or `--abstract-unix-socket NAME` (one of
    /// them), checked.
    pub fn unix_socket(&self, args: &Parser) -> Result<Option<UnixSocket>, Failure> {
        match (&self.unix_socket, &self.abstract_unix_socket) {
            (Some(_), Some(_)) => {
                Err(args.usage("give --unix-socket or --abstract-unix-socket, not both"))
            }
            (Some(p), None) => {
                UnixSocket::path(p).map(Some).map_err(|e| args.usage(format!("--unix-socket: {e}")))
            }
            (None, Some(n)) => UnixSocket::abstract_name(n.as_bytes())
                .map(Some)
                .map_err(|e| args.usage(format!("--abstract-unix-socket: {e}"))),
            (None, None) => Ok(None),
        }
    }

    /// `--netns PATH`, `-4`/`-6`/`--prefer-ipv4`/`--prefer-ipv6` and `--source-address ADDR`:
    /// where the probe's sockets are made, which addresses they connect to, and from where.
    fn apply_connection(&self, args: &Parser, spec: &mut ProbeSpec) -> Result<(), Failure> {
        if let Some(path) = &self.netns {
            spec.set_netns(path).map_err(|e| args.usage(format!("--netns: {e}")))?;
        }
        if let Some(f) = self.ip_family {
            spec.set_ip_family(f).map_err(|e| args.usage(format!("{}: {e}", f.flag())))?;
        }
        if let Some(text) = &self.source_address {
            let set = spec.set_source_address_text(text);
            set.map_err(|e| args.usage(format!("--source-address: {e}")))?;
        }
        Ok(())
    }

    /// Applies the flags to `spec`; `is_http` says whether the target is http:// or https://,
    /// `is_tcp` whether it is tcp://.
    pub fn apply(
        &self,
        args: &Parser,
        spec: &mut ProbeSpec,
        is_http: bool,
        is_tcp: bool,
    ) -> Result<(), Failure> {
        // Flags for one kind of target: refused on others; their errors named after them.
        let only = |ok: bool, m: String| ok.then_some(()).ok_or_else(|| args.usage(m));
        let (tcp, http) = ("to tcp:// targets only", "to http:// and https:// targets only");
        let named = |flag: &'static str| move |e: SpecError| args.usage(format!("{flag}: {e}"));
        if self.is_steps() {
            only(is_tcp, format!("--send, --expect and --send-template apply {tcp}"))?;
            let steps = self.steps(args)?;
            // --starttls set the single exchange's flag (and TLS options); the step replaces it.
            spec.set_starttls(false).map_err(|e| args.usage(e))?;
            spec.set_tcp_steps(steps).map_err(|e| args.usage(e))?;
        } else if let Some(v) = &self.send {
            only(is_tcp, format!("--send applies {tcp}"))?;
            unescape(v).and_then(|data| spec.set_send(data)).map_err(named("--send"))?;
        }
        if let Some(v) = self.expect.as_ref().filter(|_| !self.is_steps()) {
            only(
                is_tcp,
                format!("--expect applies {tcp} (--expect-status and --expect-body for HTTP)"),
            )?;
            Pattern::new(v).and_then(|p| spec.set_expect_reply(p)).map_err(named("--expect"))?;
        }
        if let Some(v) = &self.expect_status {
            only(is_http, format!("--expect-status applies {http}"))?;
            let set = StatusSet::parse(v).and_then(|set| spec.set_expect_status(set));
            set.map_err(named("--expect-status"))?;
        }
        if let Some(v) = &self.expect_body {
            only(is_http, format!("--expect-body applies {http}"))?;
            let set = Pattern::new(v).and_then(|p| spec.set_expect_body(p));
            set.map_err(named("--expect-body"))?;
        }
        for (flag, mode, v) in [
            ("--fail-if-body-cel", CelMode::FailIfMatches, &self.fail_if_body_cel),
            ("--expect-body-cel", CelMode::FailIfNotMatches, &self.expect_body_cel),
        ] {
            let Some(v) = v else { continue };
            only(is_http, format!("{flag} applies {http}"))?;
            BodyCel::new(v).and_then(|c| spec.set_expect_body_cel(mode, c)).map_err(named(flag))?;
        }
        self.apply_connection(args, spec)?;
        self.apply_request(args, spec, is_http)?;
        self.apply_http_client(args, spec, is_http)?;
        self.apply_http_version(args, spec, is_http)?;
        self.apply_grpc(args, spec, is_http)?;
        if self.keep_alive {
            if !is_http && !matches!(spec.kind, ProbeKind::Grpc(_)) {
                return Err(args
                    .usage("--keep-alive applies to http://, https:// and grpc:// targets only"));
            }
            // Accepted for symmetry with watch files; one run has no later run to reuse for.
            spec.set_keep_alive(true).map_err(|e| args.usage(format!("--keep-alive: {e}")))?;
        }
        Ok(())
    }

    /// `--max-redirects N` (redirects followed at most; the kubelet's 9 without it),
    /// `--cookies` (the run keeps the cookies responses set for its later hops) and
    /// `--compression CODING` (the body decoded before it is kept and matched).
    fn apply_http_client(
        &self,
        args: &Parser,
        spec: &mut ProbeSpec,
        is_http: bool,
    ) -> Result<(), Failure> {
        for (opt, given) in [
            ("--max-redirects", self.max_redirects.is_some()),
            ("--cookies", self.cookies),
            ("--compression", self.compression.is_some()),
            ("--proxy", self.proxy.is_some()),
        ] {
            if given && !is_http {
                return Err(
                    args.usage(format!("{opt} applies to http:// and https:// targets only"))
                );
            }
        }
        if let Some(v) = &self.max_redirects {
            let n: u32 = v.parse().map_err(|_| {
                args.usage(format!(
                    "bad --max-redirects '{v}' (expected 0 to {})",
                    prober::MAX_MAX_REDIRECTS
                ))
            })?;
            spec.set_max_redirects(n).map_err(|e| args.usage(format!("--max-redirects: {e}")))?;
        }
        if self.cookies {
            spec.set_cookies(true).map_err(|e| args.usage(format!("--cookies: {e}")))?;
        }
        if self.compression.is_some() {
            let set = spec.set_compression(self.compression);
            set.map_err(|e| args.usage(format!("--compression: {e}")))?;
        }
        self.apply_proxy(args, spec)
    }

    /// `-x/--proxy URL` with its `--proxy-header`s and `--noproxy` list.
    fn apply_proxy(&self, args: &Parser, spec: &mut ProbeSpec) -> Result<(), Failure> {
        let alone = !self.proxy_headers.is_empty() || self.noproxy.is_some();
        let Some(url) = &self.proxy else {
            return alone
                .then(|| args.usage("--proxy-header and --noproxy need --proxy"))
                .map_or(Ok(()), Err);
        };
        let proxy =
            prober::HttpProxy::from_words(url, self.noproxy.as_deref(), &self.proxy_headers);
        let set = proxy.and_then(|p| spec.set_http_proxy(Some(p)));
        set.map_err(|e| args.usage(format!("--proxy: {e}")))
    }

    /// curl's `--http1.1` (HTTP/1.1 only: ALPN offers `http/1.1` alone) and
    /// `--http2-prior-knowledge` (h2c on `http://`, `httpGet.protocol: HTTP2`).
    fn apply_http_version(
        &self,
        args: &Parser,
        spec: &mut ProbeSpec,
        is_http: bool,
    ) -> Result<(), Failure> {
        let Some((opt, version)) = self.http_version else { return Ok(()) };
        if !is_http {
            return Err(args.usage(format!("{opt} applies to http:// and https:// targets only")));
        }
        spec.set_http_version(version).map_err(|e| args.usage(format!("{opt}: {e}")))
    }

    /// `-X METHOD` and `-d DATA` as curl reads them: `-d` sends DATA (`@FILE`: the file's
    /// bytes, as they are) with `POST` unless `-X` names another method, and with
    /// `Content-Type: application/x-www-form-urlencoded` unless a `-H` sets one.
    fn apply_request(
        &self,
        args: &Parser,
        spec: &mut ProbeSpec,
        is_http: bool,
    ) -> Result<(), Failure> {
        if (self.method.is_some() || self.data.is_some()) && !is_http {
            let opt = if self.method.is_some() { "-X/--request" } else { "-d/--data" };
            return Err(args.usage(format!("{opt} applies to http:// and https:// targets only")));
        }
        if let Some(data) = &self.data {
            let body = match data.strip_prefix('@') {
                Some(path) => read_body_file(path).map_err(|e| args.usage(format!("-d: {e}")))?,
                None => data.as_bytes().to_vec(),
            };
            spec.set_body(body).map_err(|e| args.usage(format!("-d: {e}")))?;
            spec.set_method("POST").map_err(|e| args.usage(format!("-d: {e}")))?;
            let has_type = match &spec.kind {
                prober::ProbeKind::Http(h) => {
                    h.headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("content-type"))
                }
                _ => true,
            };
            if !has_type {
                spec.add_header("Content-Type", "application/x-www-form-urlencoded")
                    .map_err(|e| args.usage(format!("-d: {e}")))?;
            }
        }
        if let Some(m) = &self.method {
            spec.set_method(m).map_err(|e| args.usage(format!("-X: {e}")))?;
        }
        Ok(())
    }
}

impl CheckFlags {
    /// grpc-health-probe's `-rpc-header 'key: value'`, `-user-agent` (curl's `-A/--user-agent`
    /// for HTTP targets) and grpc-go's authority override.
    fn apply_grpc(
        &self,
        args: &Parser,
        spec: &mut ProbeSpec,
        is_http: bool,
    ) -> Result<(), Failure> {
        let is_grpc = matches!(spec.kind, prober::ProbeKind::Grpc(_));
        if let Some(ua) = &self.user_agent {
            if is_http {
                // curl's -A: the User-Agent header (an empty one sends none).
                spec.add_header("User-Agent", ua)
                    .map_err(|e| args.usage(format!("--user-agent: {e}")))?;
            } else if is_grpc {
                spec.set_grpc_user_agent(ua)
                    .map_err(|e| args.usage(format!("--user-agent: {e}")))?;
            } else {
                return Err(args
                    .usage("--user-agent applies to http://, https:// and grpc:// targets only"));
            }
        }
        if (!self.rpc_headers.is_empty() || self.authority.is_some()) && !is_grpc {
            let opt = if self.authority.is_some() { "--authority" } else { "--rpc-header" };
            return Err(
                args.usage(format!("{opt} applies to grpc:// targets only (-H/--header for HTTP)"))
            );
        }
        for h in &self.rpc_headers {
            let Some((k, v)) = h.split_once(':') else {
                return Err(
                    args.usage(format!("--rpc-header: bad metadata {h:?} (expected 'key: value')"))
                );
            };
            spec.add_grpc_metadata(k.trim(), v.trim_start())
                .map_err(|e| args.usage(format!("--rpc-header: {e}")))?;
        }
        if let Some(a) = &self.authority {
            spec.set_grpc_authority(a).map_err(|e| args.usage(format!("--authority: {e}")))?;
        }
        Ok(())
    }
}

/// The bytes of `-d @FILE`, at most the body limit (a larger file is refused, not cut).
fn read_body_file(path: &str) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let f = std::fs::File::open(path).map_err(|e| format!("cannot read {path:?}: {e}"))?;
    let mut body = Vec::new();
    f.take(prober::MAX_BODY_LEN as u64 + 1)
        .read_to_end(&mut body)
        .map_err(|e| format!("cannot read {path:?}: {e}"))?;
    Ok(body)
}
