//! `prober watch --on-change CMD`: a command run when a target's published state changes, as
//! keepalived runs its notify scripts and Consul its watch handlers; a target of a watch file
//! may have its own (`onChange`, read by `prober_k8s`).
//!
//! A hook is a one-shot exec probe submitted to the watch's own engine, so it runs through the
//! library's exec machinery: spawned without a shell in a process group of its own, stdin from
//! `/dev/null`, stdout and stderr captured (bounded) and nothing else inherited (every other
//! descriptor is close-on-exec or closed in the child), killed with its group at its timeout,
//! reaped by pid (a pidfd), never with `waitpid(-1)`. It runs on the engine's poll loop next
//! to the probes, never blocking it: a hook that hangs or fails delays no probe.
//!
//! One hook at a time per target: a change that comes while the target's hook runs is noted,
//! and when the hook ends it runs once more with the latest state of each role that changed,
//! so the last state is never missed however fast the target flaps.

use std::time::Duration;

use prober::{ProbeResult, ProbeSpec, Reason, Role};

/// How long a hook may run unless `--on-change-timeout` says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// How much of a hook's output (stdout and stderr, interleaved) is kept and logged.
pub const OUTPUT_LIMIT: usize = 4096;

/// The hook of a watch: its command line and timeout.
#[derive(Debug, Clone)]
pub struct HookCommand {
    /// The program and its arguments (run without a shell).
    pub argv: Vec<String>,
    /// How long a run may take before it is killed with its process group.
    pub timeout: Duration,
}

/// Splits `--on-change CMD` into words as a POSIX shell splits a simple command, with no
/// expansion of any kind: blanks separate words, `'...'` keeps everything, `"..."` keeps
/// everything but `\"`, `\\`, `\$` and `` \` ``, and a backslash outside quotes keeps the next
/// character. Anything more (variables, pipes, redirections) needs a shell, which the command
/// asks for itself: `sh -c '...'`.
///
/// # Errors
///
/// An unterminated quote, a lone backslash at the end, or no word at all.
pub fn split_words(s: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => words.extend(word.take()),
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => w.push(c),
                        None => return Err("unterminated ' quote".into()),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => w.push(c),
                            Some(c) => {
                                w.push('\\');
                                w.push(c);
                            }
                            None => return Err("unterminated \" quote".into()),
                        },
                        Some(c) => w.push(c),
                        None => return Err("unterminated \" quote".into()),
                    }
                }
            }
            '\\' => match chars.next() {
                Some(c) => word.get_or_insert_with(String::new).push(c),
                None => return Err("a lone \\ at the end".into()),
            },
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    if words.is_empty() {
        return Err("empty command".into());
    }
    Ok(words)
}

impl HookCommand {
    /// The one-shot exec spec of a run. The host calls it with placeholder values at start,
    /// so that a command the library refuses is a usage error, not a failure at the first
    /// change.
    ///
    /// # Errors
    ///
    /// What the library says of the command, its timeout or its environment.
    pub fn spec(&self, c: &Change<'_>) -> Result<ProbeSpec, String> {
        let mut spec = ProbeSpec::exec(&self.argv).map_err(|e| e.to_string())?;
        spec.set_timeout(self.timeout).map_err(|e| e.to_string())?;
        spec.set_output_limit(OUTPUT_LIMIT).map_err(|e| e.to_string())?;
        // An environment value cannot hold a NUL, which a name in a file may.
        let target = c.target.replace('\0', "\\x00");
        for (name, value) in [
            ("PROBER_TARGET", target.as_str()),
            ("PROBER_PROBE", c.role.as_str()),
            ("PROBER_FROM", c.from.as_str()),
            ("PROBER_TO", c.to.as_str()),
            ("PROBER_REASON", c.reason.as_str()),
        ] {
            spec.set_env(name, value).map_err(|e| e.to_string())?;
        }
        Ok(spec)
    }
}

/// A hook run that is due: the role, from, to, and the reason of the change.
pub type Due = (Role, ProbeResult, ProbeResult, Reason);

/// What a hook run is told: `PROBER_*` in its environment.
#[derive(Debug, Clone, Copy)]
pub struct Change<'a> {
    /// The target's name (`PROBER_TARGET`).
    pub target: &'a str,
    /// The probe whose published value changed (`PROBER_PROBE`).
    pub role: Role,
    /// The value the hooks were last told of (`PROBER_FROM`).
    pub from: ProbeResult,
    /// The value now (`PROBER_TO`).
    pub to: ProbeResult,
    /// Why the last change happened (`Reason::as_str`: the fixed set of `--json`'s `reason`).
    pub reason: Reason,
}

/// The hook's side of one target.
#[derive(Debug)]
struct TargetHooks {
    /// The target's hook: its `onChange` in the watch file, else `--on-change`; none, none.
    command: Option<HookCommand>,
    /// The run in progress: its role, and what it was told (from, to).
    running: Option<(Role, ProbeResult, ProbeResult)>,
    /// Per role: the state the hooks were last told of (the initial value before any).
    told: [ProbeResult; 3],
    /// Per role: the latest published value and the reason of its change.
    latest: [(ProbeResult, Reason); 3],
}

/// The hooks of a watch: which target's hook runs, what each was told.
#[derive(Debug)]
pub struct Hooks {
    targets: Vec<TargetHooks>,
}

/// A hook run that ended, as the watch logs it.
#[derive(Debug, Clone, Copy)]
pub struct Ended {
    /// The probe whose change the run was told of.
    pub role: Role,
    /// The value it was told the change came from.
    pub from: ProbeResult,
    /// The value it was told the change went to.
    pub to: ProbeResult,
}

impl Hooks {
    /// The hooks of targets with these commands, in the watch's order; `None` when no target
    /// has one.
    pub fn new(commands: Vec<Option<HookCommand>>) -> Option<Hooks> {
        if commands.iter().all(Option::is_none) {
            return None;
        }
        let targets = commands
            .into_iter()
            .map(|command| TargetHooks {
                command,
                running: None,
                told: [ProbeResult::Unknown, ProbeResult::Failure, ProbeResult::Success],
                latest: [
                    (ProbeResult::Unknown, Reason::None),
                    (ProbeResult::Failure, Reason::None),
                    (ProbeResult::Success, Reason::None),
                ],
            })
            .collect();
        Some(Hooks { targets })
    }

    /// Target `i`'s hook command.
    pub fn command(&self, i: usize) -> Option<&HookCommand> {
        self.targets.get(i)?.command.as_ref()
    }

    /// A role's initial value (set when its probe is set): the state a first hook starts from.
    pub fn initial(&mut self, target: usize, role: Role, value: ProbeResult) {
        let t = &mut self.targets[target];
        t.told[role.index()] = value;
        t.latest[role.index()] = (value, Reason::None);
    }

    /// A published change of `target`'s `role`; the change to run a hook for now, if the
    /// target has none running (else it is noted for when the running one ends).
    pub fn changed(
        &mut self,
        target: usize,
        role: Role,
        value: ProbeResult,
        reason: Reason,
    ) -> Option<Due> {
        let t = &mut self.targets[target];
        t.latest[role.index()] = (value, reason);
        if t.running.is_some() || t.command.is_none() { None } else { Self::next(t) }
    }

    /// The run of `target`'s hook ended: what it was, and the next change to run it for (the
    /// latest state of a role that differs from what the hooks were told), if any.
    pub fn ended(&mut self, target: usize) -> Option<(Ended, Option<Due>)> {
        let t = self.targets.get_mut(target)?;
        let (role, from, to) = t.running.take()?;
        Some((Ended { role, from, to }, Self::next(t)))
    }

    /// Marks the next change of `t` as running and returns it (role, from, to, reason).
    fn next(t: &mut TargetHooks) -> Option<Due> {
        let role = Role::ALL.into_iter().find(|r| t.latest[r.index()].0 != t.told[r.index()])?;
        let i = role.index();
        let (from, (to, reason)) = (t.told[i], t.latest[i]);
        t.told[i] = to;
        t.running = Some((role, from, to));
        Some((role, from, to, reason))
    }

    /// Whether no hook runs (and so none is waiting either: one only waits behind a run).
    pub fn idle(&self) -> bool {
        self.targets.iter().all(|t| t.running.is_none())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ProbeResult::{Failure as F, Success as S};

    #[test]
    fn words() {
        let ok = |s: &str| split_words(s).unwrap();
        assert_eq!(ok("/bin/notify  --to ops"), ["/bin/notify", "--to", "ops"]);
        assert_eq!(
            ok(r#"sh -c 'echo "$PROBER_TO" >> log'"#),
            ["sh", "-c", r#"echo "$PROBER_TO" >> log"#]
        );
        assert_eq!(ok(r#"a"b c"d e\ f "\"\$\x""#), ["ab cd", "e f", r#""$\x"#]);
        assert_eq!(ok("'' x"), ["", "x"]);
        for bad in ["", "  ", "'x", "\"x", "x\\"] {
            assert!(split_words(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_environment_of_a_run() {
        let cmd = HookCommand { argv: vec!["notify".into()], timeout: DEFAULT_TIMEOUT };
        let c =
            Change { target: "a\0b", role: Role::Liveness, from: S, to: F, reason: Reason::Tls };
        let spec = cmd.spec(&c).expect("a NUL in a name does not stop the hook");
        let prober::ProbeKind::Exec(e) = &spec.kind else { panic!("{spec:?}") };
        let env: Vec<(&str, &str)> = e.env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(
            env,
            [
                ("PROBER_TARGET", "a\\x00b"),
                ("PROBER_PROBE", "liveness"),
                ("PROBER_FROM", "success"),
                ("PROBER_TO", "failure"),
                ("PROBER_REASON", "tls"),
            ]
        );
        assert_eq!(spec.timeout, DEFAULT_TIMEOUT);
    }

    #[test]
    fn one_at_a_time_and_the_latest_state_last() {
        let cmd = HookCommand { argv: vec!["true".into()], timeout: DEFAULT_TIMEOUT };
        assert!(Hooks::new(vec![None, None]).is_none());
        let mut h = Hooks::new(vec![Some(cmd.clone()), Some(cmd.clone()), None]).unwrap();
        // A target without a hook runs none.
        assert_eq!(h.changed(2, Role::Readiness, S, Reason::None), None);
        let r = Role::Readiness;
        assert_eq!(h.changed(0, r, S, Reason::None), Some((r, F, S, Reason::None)));
        // While it runs: three changes of readiness, one of liveness; another target runs.
        assert_eq!(h.changed(0, r, F, Reason::Status), None);
        assert_eq!(h.changed(0, r, S, Reason::None), None);
        assert_eq!(h.changed(0, r, F, Reason::Refused), None);
        assert_eq!(h.changed(0, Role::Liveness, F, Reason::Refused), None);
        assert!(h.changed(1, r, S, Reason::None).is_some());
        // The readiness change is coalesced into its latest state; liveness follows.
        let (ended, next) = h.ended(0).unwrap();
        assert_eq!((ended.role, ended.from, ended.to), (r, F, S));
        assert_eq!(next, Some((r, S, F, Reason::Refused)));
        let (_, next) = h.ended(0).unwrap();
        assert_eq!(next, Some((Role::Liveness, S, F, Reason::Refused)));
        assert!(!h.idle());
        let (_, next) = h.ended(0).unwrap();
        assert_eq!(next, None);
        // A role back where the hooks last saw it runs nothing.
        assert_eq!(h.changed(0, r, S, Reason::None), Some((r, F, S, Reason::None)));
        h.changed(0, r, F, Reason::Status);
        h.changed(0, r, S, Reason::None);
        assert_eq!(h.ended(0).unwrap().1, None);
        assert!(h.ended(1).unwrap().1.is_none());
        assert!(h.idle());
        assert!(h.ended(0).is_none(), "nothing runs");
    }
}
