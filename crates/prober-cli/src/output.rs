//! What the command prints: the human lines and the JSON lines of `prober check` and
//! `prober watch` (changes, runs, the summary), in one place, apart from the flags and the
//! running. Human lines escape what they quote from a peer (`escape_for_terminal`) and quote
//! target names that could pass for other fields; JSON lines are one object per line.

use std::time::Duration;

use prober::{Outcome, ProbeResult, Reason, Role, Timings};
use serde::Serialize;

use crate::args::{escape_for_terminal, quote_field};
use crate::duration;
use prober_watch::hooks::Ended;
use prober_watch::target_state::{TargetState, failing};

// ---- prober check --------------------------------------------------------------------------

/// `failure: HTTP probe failed with statuscode: 503 (status, HTTP 503, 1.2ms) body: db down`.
/// A failure ends with the first line of what the probe got (the command's output, the HTTP
/// body, the TCP reply): that line is usually what tells why.
pub(crate) fn human_line(o: &Outcome, duration: Duration) -> String {
    let mut line = human_head(o, duration);
    if let Some(answers) = prober_watch::facts::dns_answers(o) {
        // What dig's ANSWER SECTION shows: worth a look whatever the verdict.
        line.push_str(&format!(" answers: {answers}"));
    } else if o.result == ProbeResult::Failure {
        let output = o.output_lossy();
        if let Some(first) = first_line(&output).filter(|l| !o.message.contains(l.as_ref())) {
            let label = if o.http_status.is_some() { "body" } else { "output" };
            line.push_str(&format!(" {label}: {}", escape_for_terminal(&first)));
        }
    }
    line
}

/// `failure: MESSAGE (DETAILS, DURATION)`: the result, message and details of an outcome.
fn human_head(o: &Outcome, duration: Duration) -> String {
    let mut line = o.result.as_str().to_string();
    if !o.message.is_empty() {
        line.push_str(": ");
        line.push_str(&escape_for_terminal(&o.message));
    }
    let mut details = details(o);
    details.push(duration::human(duration));
    line.push_str(&format!(" ({})", details.join(", ")));
    line
}

/// How much of the output's first line a human line shows, in characters.
const FIRST_LINE_CHARS: usize = 200;

/// The first line of `output` that is not blank, without its surrounding white space, cut to
/// [`FIRST_LINE_CHARS`] characters (with `...` when cut).
fn first_line(output: &str) -> Option<std::borrow::Cow<'_, str>> {
    let line = output.lines().map(str::trim).find(|l| !l.is_empty())?;
    match line.char_indices().nth(FIRST_LINE_CHARS) {
        None => Some(line.into()),
        Some((end, _)) => Some(format!("{}...", &line[..end]).into()),
    }
}

/// The short facts of an outcome for human lines: reason, HTTP status, exit code.
pub(crate) fn details(o: &Outcome) -> Vec<String> {
    let mut details = Vec::new();
    if o.reason != Reason::None {
        details.push(o.reason.as_str().to_string());
    }
    if let Some(s) = o.http_status {
        details.push(format!("HTTP {s}"));
    }
    if let Some(c) = o.exit_code {
        details.push(format!("exit {c}"));
    }
    details.extend(prober_watch::facts::details(o));
    details
}

#[derive(Serialize)]
struct TimingsJson {
    #[serde(skip_serializing_if = "Option::is_none")]
    resolve_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    connect_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tls_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    first_byte_ms: Option<f64>,
    total_ms: f64,
}

impl From<&Timings> for TimingsJson {
    fn from(t: &Timings) -> TimingsJson {
        TimingsJson {
            resolve_ms: t.resolve.map(duration::millis),
            connect_ms: t.connect.map(duration::millis),
            tls_ms: t.tls.map(duration::millis),
            first_byte_ms: t.first_byte.map(duration::millis),
            total_ms: duration::millis(t.total),
        }
    }
}

#[derive(Serialize)]
struct CheckJson<'a> {
    result: &'static str,
    message: &'a str,
    output: std::borrow::Cow<'a, str>,
    truncated: bool,
    reason: &'static str,
    duration_ms: f64,
    timings: TimingsJson,
    #[serde(skip_serializing_if = "Option::is_none")]
    http_status: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    exit_code: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    output_total: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cert_not_after: Option<i64>,
    /// A DNS or ICMP run's facts, under `dns` or `icmp`.
    #[serde(flatten)]
    facts: Option<serde_json::Map<String, serde_json::Value>>,
}

pub(crate) fn json_line(o: &Outcome, duration: Duration, has_output: bool) -> String {
    let j = CheckJson {
        result: o.result.as_str(),
        message: &o.message,
        output: o.output_lossy(),
        truncated: o.truncated,
        reason: o.reason.as_str(),
        duration_ms: duration::millis(duration),
        timings: TimingsJson::from(&o.timings),
        http_status: o.http_status,
        exit_code: o.exit_code,
        output_total: (has_output || o.output_total > 0).then_some(o.output_total),
        cert_not_after: o.cert_not_after,
        facts: facts_json(o),
    };
    serde_json::to_string(&j)
        .unwrap_or_else(|e| format!("{{\"result\":\"unknown\",\"message\":\"{e}\"}}"))
}

/// A DNS or ICMP outcome's facts as a JSON object under `dns` or `icmp`, flattened into a line.
fn facts_json(o: &Outcome) -> Option<serde_json::Map<String, serde_json::Value>> {
    prober_watch::facts::json(o).map(|(k, v)| [(k.to_string(), v)].into_iter().collect())
}

// ---- prober watch --------------------------------------------------------------------------

#[derive(Serialize)]
struct StateJson<'a> {
    time_ms: u64,
    target: &'a str,
    role: &'static str,
    result: &'static str,
    message: &'a str,
    reason: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    http_status: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    exit_code: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cert_not_after: Option<i64>,
    started: bool,
    ready: bool,
    live: bool,
}

/// One run, under its own key (`run`) so that readers of state lines, which match on
/// `target` and `role`, never take a run for a change.
#[derive(Serialize)]
struct RunJson<'a> {
    time_ms: u64,
    run: RunFields<'a>,
}

#[derive(Serialize)]
struct RunFields<'a> {
    target: &'a str,
    role: &'static str,
    result: &'static str,
    reason: &'static str,
    message: &'a str,
    duration_ms: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    http_status: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    exit_code: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cert_not_after: Option<i64>,
    /// How long after its scheduled time the run started.
    late_ms: f64,
    /// A DNS or ICMP run's facts, under `dns` or `icmp` (smokeping's figures for every run).
    #[serde(flatten)]
    facts: Option<serde_json::Map<String, serde_json::Value>>,
}

/// A role that is not a success, in the summary.
#[derive(Serialize)]
struct RoleJson<'a> {
    role: &'static str,
    /// The published value.
    result: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    last_run: Option<&'static str>,
    /// Of the last run that did not succeed.
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<&'a str>,
}

#[derive(Serialize)]
struct SummaryTarget<'a> {
    target: &'a str,
    started: bool,
    ready: bool,
    live: bool,
    not_success: Vec<RoleJson<'a>>,
}

#[derive(Serialize)]
struct SummaryJson<'a> {
    time_ms: u64,
    summary: Vec<SummaryTarget<'a>>,
    all_ready: bool,
}

pub(crate) fn state_line(
    json: bool,
    elapsed: Duration,
    t: &TargetState,
    role: Role,
    result: ProbeResult,
    outcome: Option<&Outcome>,
) -> String {
    if json {
        let j = StateJson {
            time_ms: elapsed.as_millis() as u64,
            target: &t.name,
            role: role.as_str(),
            result: result.as_str(),
            message: outcome.map_or("", |o| &o.message),
            reason: outcome.map_or("initial", |o| o.reason.as_str()),
            http_status: outcome.and_then(|o| o.http_status),
            exit_code: outcome.and_then(|o| o.exit_code),
            cert_not_after: outcome.and_then(|o| o.cert_not_after),
            started: t.started(),
            ready: t.ready(),
            live: t.live(),
        };
        return serde_json::to_string(&j).unwrap_or_default();
    }
    let mut line =
        format!("{:>9.3}s {} {role} {result}", elapsed.as_secs_f64(), quote_field(&t.name));
    match outcome {
        None => line.push_str(" (initial)"),
        Some(o) => push_why(&mut line, o),
    }
    line.push_str("  ");
    line.push_str(&t.flags());
    line
}

/// One run: `    1.204s db readiness run failure: dial tcp ...: connection refused (refused,
/// 0.2ms)`. No started / ready / live flags: a run that changes nothing leaves them as they
/// were, and one that changes something is followed by its change line.
pub(crate) fn run_line(
    json: bool,
    elapsed: Duration,
    target: &str,
    role: Role,
    o: &Outcome,
    late: Duration,
) -> String {
    if json {
        let j = RunJson {
            time_ms: elapsed.as_millis() as u64,
            run: RunFields {
                target,
                role: role.as_str(),
                result: o.result.as_str(),
                reason: o.reason.as_str(),
                message: &o.message,
                duration_ms: duration::millis(o.timings.total),
                http_status: o.http_status,
                exit_code: o.exit_code,
                cert_not_after: o.cert_not_after,
                late_ms: duration::millis(late),
                facts: facts_json(o),
            },
        };
        return serde_json::to_string(&j).unwrap_or_default();
    }
    format!(
        "{:>9.3}s {} {role} run {}",
        elapsed.as_secs_f64(),
        quote_field(target),
        human_line(o, o.timings.total)
    )
}

#[derive(Serialize)]
struct HookJson<'a> {
    time_ms: u64,
    hook: HookFields<'a>,
}

#[derive(Serialize)]
struct HookFields<'a> {
    target: &'a str,
    role: &'static str,
    from: &'static str,
    to: &'static str,
    result: &'static str,
    reason: &'static str,
    message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    exit_code: Option<i32>,
    output: std::borrow::Cow<'a, str>,
    truncated: bool,
    duration_ms: f64,
}

/// One hook run that ended: `    2.104s web hook readiness failure->success success (exit 0,
/// 3.1ms) output: notified\n`. The output (at most the hooks' output limit) is shown whole,
/// escaped onto the one line, `...` when there was more.
pub(crate) fn hook_line(
    json: bool,
    elapsed: Duration,
    target: &str,
    h: &Ended,
    o: &Outcome,
) -> String {
    if json {
        let j = HookJson {
            time_ms: elapsed.as_millis() as u64,
            hook: HookFields {
                target,
                role: h.role.as_str(),
                from: h.from.as_str(),
                to: h.to.as_str(),
                result: o.result.as_str(),
                reason: o.reason.as_str(),
                message: &o.message,
                exit_code: o.exit_code,
                output: o.output_lossy(),
                truncated: o.truncated,
                duration_ms: duration::millis(o.timings.total),
            },
        };
        return serde_json::to_string(&j).unwrap_or_default();
    }
    let mut line = format!(
        "{:>9.3}s {} hook {} {}->{} {}",
        elapsed.as_secs_f64(),
        quote_field(target),
        h.role,
        h.from,
        h.to,
        human_head(o, o.timings.total)
    );
    if !o.output.is_empty() {
        line.push_str(" output: ");
        line.push_str(&escape_for_terminal(&o.output_lossy()));
        if o.truncated {
            line.push_str("...");
        }
    }
    line
}

pub(crate) fn summary(json: bool, elapsed: Duration, states: &[TargetState]) -> String {
    if json {
        let j = SummaryJson {
            time_ms: elapsed.as_millis() as u64,
            summary: states
                .iter()
                .map(|t| SummaryTarget {
                    target: &t.name,
                    started: t.started(),
                    ready: t.ready(),
                    live: t.live(),
                    not_success: t
                        .not_success()
                        .map(|role| {
                            let i = role.index();
                            let bad = t.last_bad[i].as_deref();
                            RoleJson {
                                role: role.as_str(),
                                result: t.value[i].as_str(),
                                last_run: t.last_run[i].map(ProbeResult::as_str),
                                reason: bad.map(|o| o.reason.as_str()),
                                message: bad.map(|o| o.message.as_str()),
                            }
                        })
                        .collect(),
                })
                .collect(),
            all_ready: states.iter().all(TargetState::ready),
        };
        return serde_json::to_string(&j).unwrap_or_default();
    }
    let mut lines = Vec::new();
    for t in states {
        let name = quote_field(&t.name);
        lines.push(format!("summary: {name} {}", t.flags()));
        // Indented under the target's line, which stays the one `summary:` line per target.
        for role in t.not_success() {
            lines.push(format!("  {name} {}", explain(t, role)));
        }
    }
    lines.join("\n")
}

/// `readiness failure: dial tcp ...: connection refused (refused)`: a role's published value,
/// its last run's result when that differs, and the last failing run's message.
fn explain(t: &TargetState, role: Role) -> String {
    let i = role.index();
    let mut s = format!("{role} {}", t.value[i]);
    match t.last_run[i] {
        None => s.push_str(" (no run yet)"),
        Some(last) if failing(last) != failing(t.value[i]) => {
            s.push_str(&format!(", last run {last}"));
        }
        Some(_) => {}
    }
    if let Some(o) = &t.last_bad[i] {
        push_why(&mut s, o);
    }
    s
}

/// Appends `: MESSAGE (DETAILS)` of a run, each part only when it has something to say.
fn push_why(line: &mut String, o: &Outcome) {
    if !o.message.is_empty() {
        line.push_str(": ");
        line.push_str(&escape_for_terminal(&o.message));
    }
    let details = details(o);
    if !details.is_empty() {
        line.push_str(&format!(" ({})", details.join(", ")));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(has: [bool; 3], value: [ProbeResult; 3]) -> TargetState {
        TargetState { value, ..TargetState::new("t".into(), has) }
    }

    #[test]
    fn human_lines() {
        let mut o = Outcome::failure(Reason::Status, "HTTP probe failed with statuscode: 503");
        o.http_status = Some(503);
        assert_eq!(
            human_line(&o, Duration::from_micros(1234)),
            "failure: HTTP probe failed with statuscode: 503 (status, HTTP 503, 1.2ms)"
        );
        let mut o = Outcome::success();
        o.exit_code = Some(0);
        assert_eq!(human_line(&o, Duration::from_millis(1500)), "success (exit 0, 1.500s)");
        let o = Outcome::new(
            ProbeResult::Warning,
            Reason::Redirect,
            "Probe terminated redirects, Response body: a\nb",
        );
        assert!(
            human_line(&o, Duration::ZERO)
                .starts_with("warning: Probe terminated redirects, Response body: a\\nb (redirect")
        );
    }

    #[test]
    fn failures_show_the_first_line_of_the_output() {
        let mut o = Outcome::failure(Reason::ExitCode, "command terminated with exit code 1");
        o.exit_code = Some(1);
        o.output = b"\n  database not reachable\x1b[31m \nsecond line\n".to_vec();
        assert_eq!(
            human_line(&o, Duration::from_millis(2)),
            "failure: command terminated with exit code 1 (exit_code, exit 1, 2.0ms) \
             output: database not reachable\\x1b[31m"
        );
        o.output = "é".repeat(300).into_bytes();
        let line = human_line(&o, Duration::from_millis(2));
        assert!(line.ends_with(&format!("output: {}...", "é".repeat(200))), "{line}");
        let mut o = Outcome::failure(Reason::Status, "HTTP probe failed with statuscode: 503");
        o.http_status = Some(503);
        o.output = b"db down".to_vec();
        assert!(
            human_line(&o, Duration::ZERO).ends_with("(status, HTTP 503, 0.0ms) body: db down")
        );
        // Success, and output the message already quotes, are not repeated.
        o.result = ProbeResult::Success;
        assert!(human_line(&o, Duration::ZERO).ends_with("0.0ms)"));
        let mut o = Outcome::failure(Reason::Body, "body did not match: db down");
        o.output = b"db down".to_vec();
        assert!(human_line(&o, Duration::ZERO).ends_with("0.0ms)"));
    }
    #[test]
    fn streaks_and_explanations() {
        use ProbeResult::{Failure as F, Success as S, Unknown as U};
        let run = |r: ProbeResult, msg: &str| {
            let reason = if r == S { Reason::None } else { Reason::Refused };
            Box::new(prober::Outcome::new(r, reason, msg))
        };
        // Startup and readiness; readiness waits for startup and has not run.
        let mut t = state([true, true, false], [U, F, S]);
        assert_eq!(explain(&t, Role::Readiness), "readiness failure (no run yet)");
        // A streak starts at the first failing run, Unknown included, and ends at a success.
        let mut streaks = Vec::new();
        for (r, msg) in [(U, "cannot run"), (F, "refused"), (S, ""), (F, "refused again"), (F, "")]
        {
            let o = run(r, msg);
            streaks.push(t.starts_streak(Role::Startup, &o));
            t.record_run(Role::Startup, o);
        }
        assert_eq!(streaks, [true, false, false, true, false]);
        assert_eq!(explain(&t, Role::Startup), "startup unknown (refused)");
        t.record_run(Role::Startup, run(S, ""));
        // The last failure's message stays, with the last run's result when it differs.
        t.record_run(Role::Startup, run(F, "refused again"));
        t.value[Role::Startup.index()] = S;
        assert_eq!(
            explain(&t, Role::Startup),
            "startup success, last run failure: refused again (refused)"
        );
        let roles: Vec<Role> = t.not_success().collect();
        assert_eq!(roles, [Role::Startup, Role::Readiness]);
        t.record_run(Role::Startup, run(S, ""));
        let roles: Vec<Role> = t.not_success().collect();
        assert_eq!(roles, [Role::Readiness], "a success explains nothing");
        let j: serde_json::Value =
            serde_json::from_str(&summary(true, Duration::ZERO, &[t])).unwrap();
        assert_eq!(
            j["summary"][0]["not_success"],
            serde_json::json!([{"role": "readiness", "result": "failure"}])
        );
    }

    #[test]
    fn lines() {
        let t = state(
            [false, true, false],
            [ProbeResult::Unknown, ProbeResult::Failure, ProbeResult::Success],
        );
        let l = state_line(
            false,
            Duration::from_millis(1500),
            &t,
            Role::Readiness,
            ProbeResult::Failure,
            None,
        );
        assert_eq!(l, "    1.500s t readiness failure (initial)  started=yes ready=no live=yes");
        let mut o =
            prober::Outcome::failure(Reason::Status, "HTTP probe failed with statuscode: 503");
        o.http_status = Some(503);
        let l = state_line(
            true,
            Duration::from_millis(7),
            &t,
            Role::Readiness,
            ProbeResult::Failure,
            Some(&o),
        );
        let v: serde_json::Value = serde_json::from_str(&l).unwrap();
        assert_eq!(v["time_ms"], 7);
        assert_eq!(v["reason"], "status");
        assert_eq!(v["http_status"], 503);
        assert_eq!(v["ready"], false);
    }
}
