//! Probe specs: constructors and setters. Invalid values are refused by the setter itself.

use std::ffi::c_char;
use std::time::Duration;

use prober_core::{
    ClosePolicy, ConnectOption, ExecSpec, HttpSpec, ProbeSpec, RedirectPolicy, Schedule, SpecError,
};

use crate::enums::c_enum;
use crate::kind::{KindOf, kind_mut, require_kind};
use crate::ptr::{BoxedHandle, ExclusiveHandle, Out, try_slice_from_ptr, try_str_from_ptr};
use crate::status::*;
use crate::{guard, guard_status, set_error};

/// A probe spec: what to probe, the limits of one run, and (for `prober_engine_set_probe`) the
/// schedule. Opaque; create with a `prober_spec_new_*` function, free with `prober_spec_free`.
#[derive(Debug)]
pub struct prober_spec {
    pub(crate) spec: ProbeSpec,
    pub(crate) schedule: Schedule,
}

impl BoxedHandle for prober_spec {
    const NULL_ERROR: &'static str = "spec is NULL";
}

impl ExclusiveHandle for prober_spec {}

c_enum! {
    /// Redirect policies of HTTP probes (`prober_spec_set_redirect_policy`).
    pub enum prober_redirect_policy of RedirectPolicy {
        /// Follow redirects to the same host name (port and scheme may change): the kubelet's rule.
        PROBER_REDIRECT_SAME_HOST = 0 => SameHost,
        /// Follow only when scheme, host and port all match.
        PROBER_REDIRECT_SAME_ORIGIN = 1 => SameOrigin,
        /// Never follow; a 3xx is a Warning.
        PROBER_REDIRECT_NONE = 2 => None,
        /// Follow to any host, scheme and port, up to the limit (Go's client and
        /// blackbox_exporter's rule).
        PROBER_REDIRECT_ANY_HOST = 3 => AnyHost,
    }
}

c_enum! {
    /// How TCP and HTTP probes close their connections (`prober_spec_set_close_policy`).
    pub enum prober_close_policy of ClosePolicy {
        /// RST (SO_LINGER 0): no TIME_WAIT left behind. The default.
        PROBER_CLOSE_RESET = 0 => Reset,
        /// An orderly FIN close.
        PROBER_CLOSE_FIN = 1 => Fin,
    }
}

/// Maps a spec error to its status and records its text for `prober_last_error`.
pub(crate) fn spec_status(e: &SpecError) -> prober_status {
    let status = match e {
        SpecError::Url(_) => PROBER_E_INVALID_URL,
        SpecError::InvalidHost(_) => PROBER_E_INVALID_HOST,
        SpecError::InvalidPort(_) => PROBER_E_INVALID_PORT,
        SpecError::InvalidHeaderName(_)
        | SpecError::InvalidHeaderValue(_)
        | SpecError::InvalidHostHeader(_) => PROBER_E_INVALID_HEADER,
        SpecError::EmptyArgv | SpecError::InvalidArgument(_) => PROBER_E_INVALID_ARGV,
        SpecError::InvalidEnvName(_) | SpecError::InvalidEnvValue(_) => PROBER_E_INVALID_ENV,
        SpecError::InvalidTimeout(_) => PROBER_E_INVALID_DURATION,
        SpecError::InvalidOutputLimit => PROBER_E_INVALID,
        SpecError::InvalidSchedule(m) if m.contains("threshold") => PROBER_E_INVALID_THRESHOLD,
        SpecError::InvalidSchedule(_) => PROBER_E_INVALID_DURATION,
        SpecError::InvalidTls(_) => PROBER_E_INVALID_TLS,
        SpecError::InvalidExpectation(_) | SpecError::InvalidRequest(_) => PROBER_E_INVALID,
        // A refusal this build has no status for yet: the generic one, with its text.
        _ => PROBER_E_INVALID,
    };
    set_error(status, e)
}

/// The spec behind `spec` if it is of kind `K`, refused as `kind_mut` says otherwise.
pub(crate) fn spec_of_kind<'a, K: KindOf>(
    spec: *mut prober_spec,
    subject: &str,
) -> Result<&'a mut prober_spec, prober_status> {
    let s = prober_spec::try_mut_from_ptr(spec)?;
    require_kind::<K>(&mut s.spec, subject)?;
    Ok(s)
}

/// The body of a setter of kind `K`'s options: `f` edits them, or refuses with its status; a
/// spec of another kind is refused as `kind_mut` says.
pub(crate) fn edit_kind<K: KindOf>(
    spec: *mut prober_spec,
    subject: &str,
    f: impl FnOnce(&mut K) -> Result<(), prober_status>,
) -> prober_status {
    guard_status(|| f(kind_mut::<K>(&mut prober_spec::try_mut_from_ptr(spec)?.spec, subject)?))
}

/// Hands a new spec to C through `out`.
///
/// # Errors
/// The status of the spec's error (see [`spec_status`]).
pub(crate) fn new_spec(
    r: Result<ProbeSpec, SpecError>,
    out: Out<'_, *mut prober_spec>,
) -> Result<(), prober_status> {
    let spec = r.map_err(|e| spec_status(&e))?;
    out.write(prober_spec { spec, schedule: Schedule::default() }.to_boxed_mut_ptr());
    Ok(())
}

/// A TCP connect probe of `host` (name or IP literal; IPv6 with or without brackets) and `port`
/// (1..=65535). A host with anything else in it (a port, `/`, `?`, `#`, `@`, spaces,
/// non-ASCII) is `PROBER_E_INVALID_HOST`. On success `*out` owns a new spec (free it with `prober_spec_free`).
///
/// # Safety
/// `host` must be NULL or a NUL-terminated string; `out` must be NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_new_tcp(
    host: *const c_char,
    port: i32,
    out: *mut *mut prober_spec,
) -> prober_status {
    guard_status(|| {
        let out = Out::try_from_ptr(out, "out")?;
        let host = try_str_from_ptr(host, "host")?;
        new_spec(ProbeSpec::tcp(host, port.into()), out)
    })
}

/// An HTTP GET probe of an absolute `http://` or `https://` URL.
///
/// # Safety
/// `url` must be NULL or a NUL-terminated string; `out` must be NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_new_http(
    url: *const c_char,
    out: *mut *mut prober_spec,
) -> prober_status {
    guard_status(|| {
        let out = Out::try_from_ptr(out, "out")?;
        let url = try_str_from_ptr(url, "url")?;
        new_spec(ProbeSpec::http(url), out)
    })
}

/// An exec probe: `argc` arguments at `argv` (`argv[0]` is looked up in `PATH` when it has no
/// `/`). No shell is involved; `$(VAR)` references are expanded from `prober_spec_set_env`.
/// The strings are copied.
///
/// # Safety
/// `argv` must be NULL or point to `argc` pointers, each NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_new_exec(
    argv: *const *const c_char,
    argc: usize,
    out: *mut *mut prober_spec,
) -> prober_status {
    guard_status(|| {
        let out = Out::try_from_ptr(out, "out")?;
        if argv.is_null() {
            return Err(set_error(PROBER_E_NULL, "argv is NULL"));
        }
        if argc == 0 {
            return Err(set_error(PROBER_E_INVALID_ARGV, "exec probe needs a command (argc is 0)"));
        }
        if argc > 1 << 20 {
            return Err(set_error(PROBER_E_INVALID_ARGV, format!("argc {argc} is absurdly large")));
        }
        let args = try_slice_from_ptr(argv, argc, "argv")?
            .iter()
            .map(|&arg| try_str_from_ptr(arg, "argv element"))
            .collect::<Result<Vec<_>, _>>()?;
        new_spec(ProbeSpec::exec(&args), out)
    })
}

/// A copy of `spec`. On success `*out` owns the copy.
///
/// # Safety
/// `spec` must be NULL or a live spec; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_clone(
    spec: *const prober_spec,
    out: *mut *mut prober_spec,
) -> prober_status {
    guard_status(|| {
        let s = prober_spec::try_ref_from_ptr(spec)?;
        let out = Out::try_from_ptr(out, "out")?;
        out.write(prober_spec { spec: s.spec.clone(), schedule: s.schedule }.to_boxed_mut_ptr());
        Ok(())
    })
}

/// Frees a spec. NULL is accepted and ignored.
///
/// # Safety
/// `spec` must be NULL or a spec from this library not freed before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_free(spec: *mut prober_spec) {
    guard(|| prober_spec::free_boxed_ptr(spec))
}

/// Sets the timeout of one run, in milliseconds (1 ms to 24 h; default 1000).
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_timeout_ms(
    spec: *mut prober_spec,
    ms: u32,
) -> prober_status {
    guard_status(|| {
        let s = prober_spec::try_mut_from_ptr(spec)?;
        s.spec.set_timeout(Duration::from_millis(ms.into())).map_err(|e| spec_status(&e))
    })
}

/// The body of a schedule setter: `f` edits a copy of the spec's schedule, which replaces it
/// unless `f` refuses the value (with the text for `prober_last_error`, under `status`).
pub(crate) fn set_schedule(
    spec: *mut prober_spec,
    status: prober_status,
    f: impl FnOnce(&mut Schedule) -> Result<(), String>,
) -> prober_status {
    guard_status(|| {
        let s = prober_spec::try_mut_from_ptr(spec)?;
        let mut next = s.schedule;
        f(&mut next).map_err(|m| set_error(status, m))?;
        s.schedule = next;
        Ok(())
    })
}

/// A period in milliseconds, 1 ms to 7 days; `what` names it in the refusal.
pub(crate) fn period(what: &str, ms: u32) -> Result<Duration, String> {
    if ms == 0 || u64::from(ms) > 7 * 24 * 3600 * 1000 {
        return Err(format!("invalid {what} {ms} ms (expected 1 ms to 7 days)"));
    }
    Ok(Duration::from_millis(ms.into()))
}

/// Sets the period between runs of a periodic probe, in milliseconds (1 ms to 7 days; default
/// 10000). Used by `prober_engine_set_probe`.
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_period_ms(
    spec: *mut prober_spec,
    ms: u32,
) -> prober_status {
    set_schedule(spec, PROBER_E_INVALID_DURATION, |s| {
        s.period = period("period", ms)?;
        Ok(())
    })
}

/// Sets the delay before the first run after the target (re)starts, in milliseconds (0 to 7
/// days; default 0).
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_initial_delay_ms(
    spec: *mut prober_spec,
    ms: u32,
) -> prober_status {
    set_schedule(spec, PROBER_E_INVALID_DURATION, |s| {
        if u64::from(ms) > 7 * 24 * 3600 * 1000 {
            return Err(format!("invalid initial delay {ms} ms (expected at most 7 days)"));
        }
        s.initial_delay = Duration::from_millis(ms.into());
        Ok(())
    })
}

/// Sets the consecutive successes and failures needed to publish a change (both at least 1;
/// defaults 1 and 3). A success threshold other than 1 is refused later by
/// `prober_engine_set_probe` for liveness and startup probes.
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_thresholds(
    spec: *mut prober_spec,
    success: u32,
    failure: u32,
) -> prober_status {
    set_schedule(spec, PROBER_E_INVALID_THRESHOLD, |s| {
        if success == 0 || failure == 0 {
            return Err(format!(
                "thresholds must be at least 1 (got success threshold {success}, failure threshold {failure})"
            ));
        }
        s.success_threshold = success;
        s.failure_threshold = failure;
        Ok(())
    })
}

/// Starts the first run of a periodic probe at a random point in `[0, period)` after the
/// initial delay, to spread many targets added at once (default off).
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_jitter(spec: *mut prober_spec, on: bool) -> prober_status {
    set_schedule(spec, PROBER_E_INVALID, |s| {
        s.jitter = on;
        Ok(())
    })
}

/// Sets how many bytes of HTTP body or command output are kept (1 to 64 MiB; default 10240).
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_output_limit(
    spec: *mut prober_spec,
    bytes: usize,
) -> prober_status {
    guard_status(|| {
        let s = prober_spec::try_mut_from_ptr(spec)?;
        s.spec.set_output_limit(bytes).map_err(|e| spec_status(&e))
    })
}

/// Adds an HTTP request header (HTTP probes only). A header replaces the default of the same
/// name; an empty `User-Agent` or `Accept` value removes that default; `Host` sets the virtual
/// host. Names must be tokens; values must not contain CR, LF or NUL; a `Host` value must be a
/// host name or IP address with an optional `:port` (`[::1]:8080`), else
/// `PROBER_E_INVALID_HEADER`.
///
/// # Safety
/// `spec` must be NULL or a live spec; `name` and `value` NULL or NUL-terminated strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_add_header(
    spec: *mut prober_spec,
    name: *const c_char,
    value: *const c_char,
) -> prober_status {
    guard_status(|| {
        let s = prober_spec::try_mut_from_ptr(spec)?;
        let name = try_str_from_ptr(name, "header name")?;
        let value = try_str_from_ptr(value, "header value")?;
        require_kind::<HttpSpec>(&mut s.spec, "headers apply to")?;
        s.spec.add_header(name, value).map_err(|e| spec_status(&e))
    })
}

/// Sets a static environment variable of an exec probe: it feeds `$(NAME)` expansion in argv
/// (as written) and is added to the command's environment, with `$(NAME)` references to the
/// variables set before it expanded and `$$` made `$`, as the kubelet builds a container's
/// environment. Setting a name again replaces its value, in its place.
///
/// # Safety
/// `spec` must be NULL or a live spec; `name` and `value` NULL or NUL-terminated strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_env(
    spec: *mut prober_spec,
    name: *const c_char,
    value: *const c_char,
) -> prober_status {
    guard_status(|| {
        let s = prober_spec::try_mut_from_ptr(spec)?;
        let name = try_str_from_ptr(name, "variable name")?;
        let value = try_str_from_ptr(value, "variable value")?;
        require_kind::<ExecSpec>(&mut s.spec, "environment variables apply to")?;
        s.spec.set_env(name, value).map_err(|e| spec_status(&e))
    })
}

/// Sets the working directory of an exec probe's command.
///
/// # Safety
/// `spec` must be NULL or a live spec; `dir` NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_workdir(
    spec: *mut prober_spec,
    dir: *const c_char,
) -> prober_status {
    guard_status(|| {
        let s = prober_spec::try_mut_from_ptr(spec)?;
        let dir = try_str_from_ptr(dir, "dir")?;
        let exec = kind_mut::<ExecSpec>(&mut s.spec, "a working directory applies to")?;
        if dir.is_empty() {
            return Err(set_error(PROBER_E_INVALID, "working directory is empty"));
        }
        exec.cwd = Some(dir.into());
        Ok(())
    })
}

/// Sets the redirect policy of an HTTP probe: one of `PROBER_REDIRECT_*`.
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_redirect_policy(
    spec: *mut prober_spec,
    policy: u32,
) -> prober_status {
    guard_status(|| {
        let s = prober_spec::try_mut_from_ptr(spec)?;
        let Some(p) = prober_redirect_policy::from_code(policy) else {
            return Err(set_error(
                PROBER_E_INVALID_ENUM,
                format!("{policy} is not a PROBER_REDIRECT_* value"),
            ));
        };
        require_kind::<HttpSpec>(&mut s.spec, "redirect policies apply to")?;
        s.spec.set_redirect_policy(p);
        Ok(())
    })
}

/// Sets how a TCP, HTTP or gRPC probe closes its connections: one of `PROBER_CLOSE_*`
/// (`PROBER_E_WRONG_KIND` for exec, ICMP and DNS probes).
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_close_policy(
    spec: *mut prober_spec,
    policy: u32,
) -> prober_status {
    guard_status(|| {
        let s = prober_spec::try_mut_from_ptr(spec)?;
        let Some(p) = prober_close_policy::from_code(policy) else {
            return Err(set_error(
                PROBER_E_INVALID_ENUM,
                format!("{policy} is not a PROBER_CLOSE_* value"),
            ));
        };
        // ICMP has no connection to close, and a DNS probe's TCP connection closes as the
        // prober-dns machine closes it: both refuse, rather than take a value they ignore.
        s.spec
            .options_taking(ConnectOption::Close, "close policies apply to")
            .map_err(|e| set_error(PROBER_E_WRONG_KIND, e))?;
        s.spec.set_close_policy(p);
        Ok(())
    })
}
