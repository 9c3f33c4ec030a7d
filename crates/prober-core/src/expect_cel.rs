//! A CEL expression over a JSON body: blackbox_exporter's `fail_if_body_json_matches_cel` and
//! `fail_if_body_json_not_matches_cel` (v0.28.0). The body is parsed as JSON and bound to the
//! variable `body`; the expression must give a boolean.
//!
//! As blackbox_exporter does it (`prober/http.go`, `matchCELExpressions`): a body that is not
//! JSON (empty included), an evaluation error (`body.foo` on `{}`: no such key) and a result
//! that is not a boolean all fail the check, whichever of the two it is; JSON numbers are
//! doubles (Go's `json.Unmarshal` into `any`), and CEL's heterogeneous equality makes
//! `body.n == 1` hold for `{"n": 1}`.
//!
//! # Why the `cel` crate, and how evaluation is bounded
//!
//! The `cel` crate (cel-rust; `cel-interpreter` is its former name, last released as 0.10)
//! has the CEL standard library, the macros and heterogeneous equality, and is pure Rust. Its
//! default parser is ANTLR-generated, and the ANTLR runtime made `prober` 1.4 MB larger; its
//! hand-written Pratt parser (feature `parser_pratt`, a hidden API: the version is pinned
//! exactly) parses the same grammar and expands the same macros, so only it is linked, and the
//! AST is evaluated with [`Context::resolve`]. No `chrono` (timestamps, durations and a time
//! zone database) and no `regex` feature (its Unicode tables): `matches` is unavailable.
//!
//! The crate has no cost limit and no interruption (cel-go has both; blackbox_exporter checks
//! its context every 100 comprehension steps). CEL has no loops and no recursion: everything
//! but a comprehension (`all`, `exists`, `exists_one`, `map`, `filter`) evaluates each node of
//! the expression once, in time linear in the values it touches. What can grow past expression
//! size x data size is a comprehension (nested ones multiply their ranges) and `+` (strings,
//! bytes and lists concatenated, doubling on each nested `+`). Each is bounded, at load and per
//! evaluation:
//!
//! - **At load**, the expression is at most [`MAX_CEL_LEN`] bytes, at most 2048 AST nodes once
//!   its macros are expanded, nested at most 96 deep (the parser's recursion limit). A parse
//!   error is refused with its line and column.
//! - **The data**: the body is parsed only up to [`MAX_CEL_BODY_LEN`] bytes (a larger one fails
//!   the check, as blackbox_exporter's `body_size_limit` fails it), and serde_json refuses JSON
//!   nested deeper than 128, so converting, comparing and dropping values recurse at most 128
//!   deep.
//! - **Comprehension steps**: the AST is rewritten when it is compiled so that each step of
//!   every comprehension first calls a counter, as the condition of `?:` (strict in its
//!   condition, so nothing of the step runs once the counter refuses). Past [`MAX_CEL_STEPS`]
//!   steps in one evaluation, or past the probe's deadline, the counter fails the evaluation
//!   and so the check. A step evaluates each node of the expression at most once, so the work
//!   between two checks is bounded by expression size x value size.
//! - **Concatenation**: every `+` is wrapped in a function that adds the size of its result to
//!   a budget of [`MAX_CEL_CONCAT_BYTES`] per evaluation (a list element counts as the size of a
//!   value), failing the evaluation past it. The appends `map` and `filter` make to their result
//!   are counted as steps instead (one element each), which keeps the crate's in-place append
//!   for them (it recognises their shape, which the rewrite keeps).
//!
//! So one evaluation holds at most the body's values, [`MAX_CEL_CONCAT_BYTES`] of concatenations
//! (plus the last one, at most twice the budget) and one element per step, and stops by
//! [`MAX_CEL_STEPS`] steps or the deadline, whichever comes first. The evaluation runs on the
//! thread that judges the response (the engine's, which in `prober serve` is also the HTTP
//! server's): these bounds are also how long it can hold that thread.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use cel::common::ast::{
    CallExpr, ComprehensionExpr, EntryExpr, Expr, IdedExpr, LiteralValue, operators,
};
use cel::objects::{Key, Map};
use cel::parser::PrattParser;
use cel::{Context, Env, ExecutionError, Value};

use crate::SpecError;

/// The longest CEL expression accepted, in bytes.
pub const MAX_CEL_LEN: usize = 4096;
/// The largest body a CEL check parses, in bytes; a larger body fails the check.
pub const MAX_CEL_BODY_LEN: usize = 1 << 20;
/// Comprehension steps one evaluation may take.
pub const MAX_CEL_STEPS: u64 = 1_000_000;
/// Bytes one evaluation may create with `+` (strings, bytes; a list element counts as the size
/// of a value).
pub const MAX_CEL_CONCAT_BYTES: u64 = 16 << 20;

/// AST nodes an expression may have (macros expanded): bounds the work of one step.
const MAX_CEL_NODES: usize = 2048;
/// The per-step counter, called before each comprehension step (a user's call to it only
/// counts one more step).
const STEP_FN: &str = "__prober_step";
/// The concatenation meter, around every `+`.
const SIZED_FN: &str = "__prober_sized";

/// What a body CEL check wants of the expression (blackbox_exporter's two fields).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CelMode {
    /// The check fails when the expression is true (`fail_if_body_json_matches_cel`).
    FailIfMatches = 0,
    /// The check fails when the expression is false (`fail_if_body_json_not_matches_cel`).
    FailIfNotMatches = 1,
}

/// A compiled CEL expression over a JSON body; see the module documentation for its bounds.
#[derive(Clone)]
pub struct BodyCel {
    source: Arc<str>,
    env: Arc<Env>,
    expr: Arc<IdedExpr>,
}

impl BodyCel {
    /// Compiles `source`, a CEL expression over the variable `body`.
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidExpectation`] for an expression that is empty, longer than
    /// [`MAX_CEL_LEN`] bytes, or does not parse (the message gives the line and column).
    pub fn new(source: &str) -> Result<BodyCel, SpecError> {
        let bad = |why: String| {
            SpecError::InvalidExpectation(format!("invalid CEL expression {source:?}: {why}"))
        };
        if source.trim().is_empty() {
            return Err(bad("empty".into()));
        }
        if source.len() > MAX_CEL_LEN {
            return Err(bad(format!("longer than {MAX_CEL_LEN} bytes")));
        }
        let mut expr = PrattParser::new()
            .max_expression_node_count(MAX_CEL_NODES)
            .parse(source)
            .map_err(|e| bad(parse_error_text(&e)))?;
        let mut ids = Ids(max_id(&expr));
        bound(&mut ids, &mut expr);
        let env = Arc::new(Env::stdlib());
        Ok(BodyCel { source: source.into(), env, expr: Arc::new(expr) })
    }

    /// The expression as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Evaluates the expression over `body` parsed as JSON: `Ok(result)` for a boolean result,
    /// `Err(why)` for a body that is not JSON (or longer than [`MAX_CEL_BODY_LEN`]), an
    /// evaluation error, a result that is not a boolean, or a bound reached (steps,
    /// concatenation, `deadline`).
    ///
    /// # Errors
    ///
    /// The reason as text, for a message.
    pub fn eval_json(&self, body: &[u8], deadline: Option<Instant>) -> Result<bool, String> {
        if body.len() > MAX_CEL_BODY_LEN {
            return Err(format!(
                "body is {} bytes, more than the {MAX_CEL_BODY_LEN} a CEL expression reads",
                body.len()
            ));
        }
        let json: serde_json::Value = serde_json::from_slice(body)
            .map_err(|e| format!("Error unmarshalling HTTP body to JSON: {e}"))?;
        let budget = Arc::new(Budget::default());
        let mut cx = Context::with_env(Arc::clone(&self.env));
        cx.add_variable_from_value("body", json_value(json));
        let steps = Arc::clone(&budget);
        cx.add_function(STEP_FN, move || -> Result<bool, ExecutionError> {
            steps.step(deadline).map(|()| true)
        })
        .map_err(|e| format!("{e:?}"))?;
        let sized = Arc::clone(&budget);
        cx.add_function(SIZED_FN, move |v: Value| -> Result<Value, ExecutionError> {
            sized.concat(&v).map(|()| v)
        })
        .map_err(|e| format!("{e:?}"))?;
        match cx.resolve(&self.expr) {
            Ok(Value::Bool(b)) => Ok(b),
            Ok(v) => Err(format!("CEL evaluation result is not a boolean: {}", type_name(&v))),
            Err(e) => Err(format!("Error evaluating CEL expression: {e}")),
        }
    }
}

impl fmt::Debug for BodyCel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BodyCel({:?})", self.as_str())
    }
}

impl fmt::Display for BodyCel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq for BodyCel {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

impl Eq for BodyCel {}

/// What one evaluation has spent.
#[derive(Default)]
struct Budget {
    steps: AtomicU64,
    bytes: AtomicU64,
}

impl Budget {
    fn step(&self, deadline: Option<Instant>) -> Result<(), ExecutionError> {
        let n = self.steps.fetch_add(1, Ordering::Relaxed) + 1;
        if n > MAX_CEL_STEPS {
            return Err(ExecutionError::function_error(
                "comprehension",
                format!("more than {MAX_CEL_STEPS} steps"),
            ));
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(ExecutionError::function_error(
                "comprehension",
                "the probe's timeout passed",
            ));
        }
        Ok(())
    }

    fn concat(&self, v: &Value) -> Result<(), ExecutionError> {
        let size = match v {
            Value::String(s) => s.len(),
            Value::Bytes(b) => b.len(),
            Value::List(l) => l.len().saturating_mul(size_of::<Value>()),
            _ => 0,
        } as u64;
        let total = self.bytes.fetch_add(size, Ordering::Relaxed).saturating_add(size);
        if total > MAX_CEL_CONCAT_BYTES {
            return Err(ExecutionError::function_error(
                "_+_",
                format!("concatenations larger than {MAX_CEL_CONCAT_BYTES} bytes"),
            ));
        }
        Ok(())
    }
}

/// The JSON value as CEL sees it, numbers as doubles (Go's `json.Unmarshal` into `any`).
/// serde_json refused nesting deeper than 128, which bounds this recursion.
fn json_value(v: serde_json::Value) -> Value {
    match v {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(b),
        serde_json::Value::Number(n) => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        serde_json::Value::String(s) => Value::String(Arc::new(s)),
        serde_json::Value::Array(a) => {
            Value::List(Arc::new(a.into_iter().map(json_value).collect()))
        }
        serde_json::Value::Object(o) => {
            let map = o.into_iter().map(|(k, v)| (Key::String(Arc::new(k)), json_value(v)));
            Value::Map(Map { map: Arc::new(map.collect()) })
        }
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::List(_) => "list",
        Value::Map(_) => "map",
        Value::Int(_) => "int",
        Value::UInt(_) => "uint",
        Value::Float(_) => "double",
        Value::String(_) => "string",
        Value::Bytes(_) => "bytes",
        Value::Null => "null",
        _ => "other",
    }
}

/// The crate's parse errors, one line each (it prints the source and a caret under it).
fn parse_error_text(e: &cel::ParseErrors) -> String {
    e.errors
        .iter()
        .map(|e| format!("{} (line {}, column {})", e.msg, e.pos.0, e.pos.1))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Fresh node ids for the nodes the rewrite adds (above every id the parser gave).
struct Ids(u64);

impl Ids {
    fn next(&mut self, expr: Expr) -> IdedExpr {
        self.0 += 1;
        IdedExpr { id: self.0, expr }
    }
}

/// The largest node id in `e` (the parser's node count bounds the recursion).
fn max_id(e: &IdedExpr) -> u64 {
    let entry = |x: &EntryExpr| match x {
        EntryExpr::MapEntry(m) => max_id(&m.key).max(max_id(&m.value)),
        EntryExpr::StructField(f) => max_id(&f.value),
    };
    let inner = match &e.expr {
        Expr::Call(c) => {
            c.target.as_deref().map_or(0, max_id).max(c.args.iter().map(max_id).max().unwrap_or(0))
        }
        Expr::Comprehension(c) => {
            [&c.iter_range, &c.accu_init, &c.loop_cond, &c.loop_step, &c.result]
                .into_iter()
                .map(max_id)
                .max()
                .unwrap_or(0)
        }
        Expr::List(l) => l.elements.iter().map(max_id).max().unwrap_or(0),
        Expr::Map(m) => m.entries.iter().map(|x| entry(&x.expr)).max().unwrap_or(0),
        Expr::Struct(st) => st.entries.iter().map(|x| entry(&x.expr)).max().unwrap_or(0),
        Expr::Select(sel) => max_id(&sel.operand),
        Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => 0,
    };
    e.id.max(inner)
}

/// Rewrites `e` in place (the parser's recursion limit bounds its depth).
fn bound(ids: &mut Ids, e: &mut IdedExpr) {
    match &mut e.expr {
        Expr::Call(call) => {
            if let Some(t) = call.target.as_deref_mut() {
                bound(ids, t);
            }
            for a in &mut call.args {
                bound(ids, a);
            }
            if call.func_name == operators::ADD && call.target.is_none() {
                let inner = std::mem::take(e);
                *e = call_of(ids, SIZED_FN, vec![inner]);
            }
        }
        Expr::Comprehension(c) => bound_comprehension(ids, c),
        Expr::List(l) => l.elements.iter_mut().for_each(|x| bound(ids, x)),
        Expr::Map(m) => m.entries.iter_mut().for_each(|x| bound_entry(ids, &mut x.expr)),
        Expr::Struct(s) => s.entries.iter_mut().for_each(|x| bound_entry(ids, &mut x.expr)),
        Expr::Select(s) => bound(ids, &mut s.operand),
        Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => {}
    }
}

fn bound_entry(ids: &mut Ids, e: &mut EntryExpr) {
    match e {
        EntryExpr::MapEntry(m) => {
            bound(ids, &mut m.key);
            bound(ids, &mut m.value);
        }
        EntryExpr::StructField(f) => bound(ids, &mut f.value),
    }
}

/// A comprehension made by a standard macro: the user's part of its step is guarded by the
/// step counter, keeping the step's shape (the crate recognises `map`/`filter` appends and the
/// `&&`/`||` of `all`/`exists` by it). The append `@result + [x]` itself is not metered: it
/// adds one element per step.
fn bound_comprehension(ids: &mut Ids, c: &mut ComprehensionExpr) {
    bound(ids, &mut c.iter_range);
    bound(ids, &mut c.accu_init);
    bound(ids, &mut c.loop_cond);
    bound(ids, &mut c.result);
    let accu = c.accu_var.clone();
    let guarded = match &mut c.loop_step.expr {
        // exists_one, filter, map with a filter: `p ? step : @result`.
        Expr::Call(call) if call.func_name == operators::CONDITIONAL && call.args.len() == 3 => {
            bound(ids, &mut call.args[0]);
            bound_append_or(ids, &mut call.args[1], &accu);
            bound(ids, &mut call.args[2]);
            guard(ids, &mut call.args[0]);
            true
        }
        // all, exists: `@result && p`, `@result || p`.
        Expr::Call(call)
            if (call.func_name == operators::LOGICAL_AND
                || call.func_name == operators::LOGICAL_OR)
                && call.args.len() == 2 =>
        {
            bound(ids, &mut call.args[1]);
            guard(ids, &mut call.args[1]);
            true
        }
        // map: `@result + [f]`.
        Expr::Call(call) if is_append(call, &accu) => {
            if let Expr::List(l) = &mut call.args[1].expr {
                for x in &mut l.elements {
                    bound(ids, x);
                    guard(ids, x);
                }
            }
            true
        }
        _ => false,
    };
    if !guarded {
        bound(ids, &mut c.loop_step);
        guard(ids, &mut c.loop_step);
    }
}

/// The `@result + [x]` of a `map`/`filter` step left unmetered (its elements bounded), any other
/// expression bounded.
fn bound_append_or(ids: &mut Ids, e: &mut IdedExpr, accu: &str) {
    match &mut e.expr {
        Expr::Call(call) if is_append(call, accu) => {
            if let Expr::List(l) = &mut call.args[1].expr {
                l.elements.iter_mut().for_each(|x| bound(ids, x));
            }
        }
        _ => bound(ids, e),
    }
}

fn is_append(call: &CallExpr, accu: &str) -> bool {
    call.func_name == operators::ADD
        && call.target.is_none()
        && call.args.len() == 2
        && matches!(&call.args[0].expr, Expr::Ident(n) if n == accu)
        && matches!(call.args[1].expr, Expr::List(_))
}

/// `e` becomes `__prober_step() ? e : false`: the counter runs first, and `?:` evaluates
/// nothing else when it fails.
fn guard(ids: &mut Ids, e: &mut IdedExpr) {
    let inner = std::mem::take(e);
    let step = call_of(ids, STEP_FN, Vec::new());
    let otherwise = ids.next(Expr::Literal(LiteralValue::Boolean(false.into())));
    *e = call_of(ids, operators::CONDITIONAL, vec![step, inner, otherwise]);
}

fn call_of(ids: &mut Ids, name: &str, args: Vec<IdedExpr>) -> IdedExpr {
    ids.next(Expr::Call(CallExpr { func_name: name.into(), target: None, args }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(expr: &str, body: &str) -> Result<bool, String> {
        BodyCel::new(expr).unwrap().eval_json(body.as_bytes(), None)
    }

    #[test]
    fn blackbox_cases() {
        assert_eq!(eval("body.foo.bar == 'baz'", r#"{"foo": {"bar": "baz"}}"#), Ok(true));
        assert_eq!(eval("body.foo.bar == 'qux'", r#"{"foo": {"bar": "baz"}}"#), Ok(false));
        assert!(eval("body.foo.bar == 'qux'", "{}").is_err());
        assert!(eval("body.foo.bar", r#"{"foo": {"bar": "baz"}}"#).is_err());
        assert!(eval("body.foo.bar == 'baz'", "hello world").is_err());
        assert!(eval("body.foo.bar == 'baz'", "").is_err());
        assert_eq!(eval("!has(body.foo)", "{}"), Ok(true));
        assert_eq!(eval("body == 'foo'", r#""foo""#), Ok(true));
        assert_eq!(eval("body[2] == 'baz'", r#"["foo","bar","baz"]"#), Ok(true));
        assert_eq!(eval("body", "true"), Ok(true));
        assert_eq!(eval("body.n == 1 && body.n < 2", r#"{"n": 1}"#), Ok(true));
    }

    #[test]
    fn comprehensions_and_concatenation_keep_their_meaning() {
        let list = r#"{"l": [1, 2, 3], "s": "ab"}"#;
        assert_eq!(eval("body.l.all(x, x > 0)", list), Ok(true));
        assert_eq!(eval("body.l.exists(x, x > 2)", list), Ok(true));
        assert_eq!(eval("body.l.exists_one(x, x > 2)", list), Ok(true));
        assert_eq!(eval("body.l.map(x, x * 2.0) == [2.0, 4.0, 6.0]", list), Ok(true));
        assert_eq!(eval("body.l.map(x, x > 1, x) == [2.0, 3.0]", list), Ok(true));
        assert_eq!(eval("body.l.filter(x, x > 1).size() == 2", list), Ok(true));
        assert_eq!(eval("body.s + body.s == 'abab'", list), Ok(true));
        assert_eq!(eval("[1] + [2] == [1, 2]", list), Ok(true));
        // A comprehension written inside the expression, and a comment at its end.
        assert_eq!(eval("body.l.all(x, body.l.exists(y, y == x)) // every one", list), Ok(true));
    }

    #[test]
    fn bad_expressions_are_refused_with_their_position() {
        let e = BodyCel::new("body.foo ==").unwrap_err().to_string();
        assert!(e.contains("line 1, column 12"), "{e}");
        let e = BodyCel::new("true\n&& (").unwrap_err().to_string();
        assert!(e.contains("line 2, column"), "{e}");
        // Unbalanced, and an empty or oversized expression.
        assert!(BodyCel::new("true) || (false").is_err());
        assert!(BodyCel::new("").is_err());
        assert!(BodyCel::new(&"a".repeat(MAX_CEL_LEN + 1)).is_err());
    }

    #[test]
    fn nested_comprehensions_stop_at_the_step_bound() {
        // 1000 x 1000 x 1000 steps without the bound.
        let body = format!("[{}]", vec!["0"; 1000].join(","));
        let e = eval("body.all(x, body.all(y, body.all(z, z == 0)))", &body).unwrap_err();
        assert!(e.contains("steps"), "{e}");
        let e = eval("body.map(x, body.map(y, body.map(z, z))).size() > 0", &body).unwrap_err();
        assert!(e.contains("steps"), "{e}");
    }

    #[test]
    fn doubling_concatenations_stop_at_the_byte_bound() {
        let body = format!(r#"{{"s": "{}"}}"#, "x".repeat(100_000));
        let e = eval("body.s.size() > 0 && [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63,64,65,66,67,68,69,70,71,72,73,74,75,76,77,78,79,80,81,82,83,84,85,86,87,88,89,90,91,92,93,94,95,96,97,98,99,100,101,102,103,104,105,106,107,108,109,110,111,112,113,114,115,116,117,118,119,120,121,122,123,124,125,126,127,128,129,130,131,132,133,134,135,136,137,138,139,140,141,142,143,144,145,146,147,148,149,150,151,152,153,154,155,156,157,158,159,160,161,162,163,164,165,166,167,168,169,170,171,172,173,174,175,176,177,178,179,180].map(i, body.s + body.s).size() > 0", &body).unwrap_err();
        assert!(e.contains("concatenations"), "{e}");
    }

    #[test]
    fn hostile_bodies_fail_the_check() {
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(eval("true", &deep).unwrap_err().contains("JSON"));
        let huge = format!("[{}]", vec!["0"; MAX_CEL_BODY_LEN / 2 + 1].join(","));
        assert!(eval("true", &huge).unwrap_err().contains("bytes"));
    }

    #[test]
    fn a_passed_deadline_stops_a_comprehension() {
        let p = BodyCel::new("body.all(x, x == 0)").unwrap();
        let e = p.eval_json(b"[0, 0]", Some(Instant::now())).unwrap_err();
        assert!(e.contains("timeout"), "{e}");
    }
}
