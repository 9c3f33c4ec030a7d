//! What a YAML file (a watch file, a manifest, a module file, a web config) may cost before it
//! is built: how deep its collections nest and how much its aliases expand to.
//!
//! Both limits are judged on the parser's own event stream (libyaml's, the parser serde_norway
//! runs), so a tag, an anchor, a flow or block collection or a document boundary counts
//! exactly as the deserializer will see it, and nothing is judged from the text by a second
//! set of rules. The walk stops at the first event past a limit, so any file is refused in
//! time proportional to the part read: libyaml's scanner is quadratic in the depth it has
//! reached, and the walk never lets it go past [`MAX_DEPTH`].
//!
//! Why a walk of its own before serde_norway's: serde_norway parses a whole document into
//! events before its deserializer looks at any (so its recursion limit comes after the
//! quadratic scan), and it expands an alias by replaying the anchored events, bounded only in
//! their number (100 times the document's events), not in what they hold: a 150 KB file whose
//! aliases name a 100 KB string asked for 100 GB. Here every anchored node's expanded size is
//! computed once, when the node ends, so an alias costs one addition however large its
//! expansion, and the file is refused before anything is expanded. A document that passes is
//! then parsed again by serde_norway, which builds at most what was counted here.
//!
//! This module talks to `unsafe_libyaml_norway` directly: it is the parser serde_norway
//! runs, and serde_norway does not expose its event stream. The unsafe code is confined to
//! `Events`, a reader of one event at a time.

use std::collections::HashMap;
use std::mem::MaybeUninit;

use unsafe_libyaml_norway as unsafe_libyaml;

/// The deepest nesting of collections a watch file or manifest may have: the recursion limit
/// of serde_json and serde_norway. An alias counts as the collections it stands for.
pub const MAX_DEPTH: usize = 128;

/// What aliases may add to a file, in bytes as [`expansion_budget`] counts them, for files of up to
/// 100 KiB.
pub const MIN_ALIAS_EXPANSION: u64 = 1 << 20;

/// What aliases may add to a larger file, per byte of the file.
pub const ALIAS_EXPANSION_PER_BYTE: u64 = 10;

/// What one node costs when an alias repeats it, beyond its scalar's bytes: about what
/// deserializing a node costs in memory, so that aliases of empty values are not free.
pub const NODE_COST: u64 = 16;

/// How much aliases may expand a file of `len` bytes: [`NODE_COST`] per node plus the bytes of
/// every scalar, summed over every alias as if it were written out in full.
#[must_use]
pub fn expansion_budget(len: usize) -> u64 {
    (len as u64).saturating_mul(ALIAS_EXPANSION_PER_BYTE).max(MIN_ALIAS_EXPANSION)
}

/// Refuses a YAML stream whose collections nest deeper than [`MAX_DEPTH`] or whose aliases
/// expand past [`expansion_budget`] of its size. Syntax errors are left to the deserializer,
/// which reports them with their line and column (the walk stops there: what came before
/// was within the limits).
///
/// # Errors
///
/// `line N: nested deeper than 128 levels ...`, `line N: alias *a ...` naming the first event
/// past a limit, with the limit's number.
pub fn check(text: &str) -> Result<(), String> {
    let budget = expansion_budget(text.len());
    let mut events = Events::new(text);
    let mut walk = Walk::default();
    while let Some(event) = events.next() {
        walk.event(event, budget)?;
    }
    Ok(())
}

/// One event of the stream, with what the limits need of it.
#[derive(Debug, Clone, Copy)]
enum Event<'a> {
    DocumentStart,
    /// A scalar: its anchor and its length in bytes.
    Scalar(Option<&'a [u8]>, usize),
    /// A sequence or mapping starts: its anchor.
    CollectionStart(Option<&'a [u8]>, Line),
    CollectionEnd,
    /// An alias: the anchor it names.
    Alias(&'a [u8], Line),
    Other,
}

/// A line number, from 1.
type Line = u64;

/// A node being built: what it expands to so far.
#[derive(Debug)]
struct Open {
    /// Its anchor, and the number of the collection start that defined it.
    anchor: Option<(Vec<u8>, u64)>,
    /// Nodes and scalar bytes, aliases expanded ([`NODE_COST`] per node).
    size: u64,
    /// Collection levels below this one, aliases expanded.
    height: usize,
}

/// An anchored node: what an alias of it expands to.
#[derive(Debug, Clone, Copy)]
struct Anchored {
    size: u64,
    /// Collection levels of the node itself (0 for a scalar).
    height: usize,
}

/// What an anchor names at a point of the document.
#[derive(Debug, Clone, Copy)]
enum Anchor {
    /// A collection still open, by the number of its start: an alias of it inside itself
    /// could never be written out.
    Open(u64),
    Done(Anchored),
}

#[derive(Debug, Default)]
struct Walk {
    open: Vec<Open>,
    /// Collection starts so far, numbering them.
    started: u64,
    /// This document's anchors. As in serde_norway's reader, a name is bound when its node
    /// starts, and a later definition (even one inside that node) takes the name over.
    anchors: HashMap<Vec<u8>, Anchor>,
    /// What aliases have added so far, over the whole stream.
    expanded: u64,
}

impl Walk {
    fn event(&mut self, event: Event<'_>, budget: u64) -> Result<(), String> {
        match event {
            Event::DocumentStart => self.anchors.clear(),
            Event::Scalar(anchor, len) => {
                let node = Anchored { size: NODE_COST.saturating_add(len as u64), height: 0 };
                if let Some(name) = anchor {
                    self.anchors.insert(name.to_vec(), Anchor::Done(node));
                }
                self.add(node);
            }
            Event::CollectionStart(anchor, line) => {
                if self.open.len() >= MAX_DEPTH {
                    return Err(format!(
                        "line {line}: nested deeper than {MAX_DEPTH} levels (the limit for watch files and manifests)"
                    ));
                }
                self.started += 1;
                let anchor = anchor.map(|name| (name.to_vec(), self.started));
                if let Some((name, id)) = &anchor {
                    self.anchors.insert(name.clone(), Anchor::Open(*id));
                }
                self.open.push(Open { anchor, size: NODE_COST, height: 0 });
            }
            Event::CollectionEnd => {
                let Some(done) = self.open.pop() else { return Ok(()) };
                let node = Anchored { size: done.size, height: done.height + 1 };
                if let Some((name, id)) = done.anchor {
                    // Unless a definition inside the node took the name over.
                    if let Some(bound) = self.anchors.get_mut(&name) {
                        if matches!(bound, Anchor::Open(open) if *open == id) {
                            *bound = Anchor::Done(node);
                        }
                    }
                }
                self.add(node);
            }
            Event::Alias(name, line) => {
                let shown = String::from_utf8_lossy(name);
                let node = match self.anchors.get(name) {
                    Some(Anchor::Done(node)) => *node,
                    Some(Anchor::Open(_)) => {
                        return Err(format!(
                            "line {line}: alias *{shown} is inside the node it names (it would never end)"
                        ));
                    }
                    // An unknown anchor: the deserializer reports it with its position.
                    None => return Ok(()),
                };
                if self.open.len() + node.height > MAX_DEPTH {
                    return Err(format!(
                        "line {line}: alias *{shown} nests deeper than {MAX_DEPTH} levels (the limit for watch files and manifests)"
                    ));
                }
                self.expanded = self.expanded.saturating_add(node.size);
                if self.expanded > budget {
                    return Err(format!(
                        "line {line}: alias *{shown} repeats more than the file may: aliases may \
                         add at most {budget} bytes to this file ({ALIAS_EXPANSION_PER_BYTE} times \
                         its size, at least {MIN_ALIAS_EXPANSION}; a node counts {NODE_COST} \
                         bytes plus its text)"
                    ));
                }
                self.add(node);
            }
            Event::Other => {}
        }
        Ok(())
    }

    /// A finished node joins the collection that holds it.
    fn add(&mut self, node: Anchored) {
        if let Some(parent) = self.open.last_mut() {
            parent.size = parent.size.saturating_add(node.size);
            parent.height = parent.height.max(node.height);
        }
    }
}

/// libyaml's parser over a string, one event at a time; the stream ends at its end or at the
/// first syntax error.
struct Events<'a> {
    /// Boxed and never moved: for string input libyaml keeps the parser's own address as its
    /// read handler's data.
    parser: Box<MaybeUninit<unsafe_libyaml::yaml_parser_t>>,
    /// The last event, deleted before the next is read and when the reader is dropped.
    event: MaybeUninit<unsafe_libyaml::yaml_event_t>,
    has_event: bool,
    done: bool,
    _text: std::marker::PhantomData<&'a str>,
}

impl<'a> Events<'a> {
    fn new(text: &'a str) -> Self {
        let mut parser = Box::new(MaybeUninit::<unsafe_libyaml::yaml_parser_t>::uninit());
        // SAFETY: yaml_parser_initialize writes every field of the parser it is given (a
        // valid, writable, properly aligned pointer); set_input_string keeps the pointer to
        // `text`, which outlives the parser: `Events<'a>` borrows it for 'a.
        let ok = unsafe {
            let p = parser.as_mut_ptr();
            let ok = unsafe_libyaml::yaml_parser_initialize(p).ok;
            if ok {
                unsafe_libyaml::yaml_parser_set_encoding(p, unsafe_libyaml::YAML_UTF8_ENCODING);
                unsafe_libyaml::yaml_parser_set_input_string(p, text.as_ptr(), text.len() as u64);
            }
            ok
        };
        // Initialisation fails only when its first buffers cannot be allocated (Rust's
        // allocator aborts first); should it fail, there are no events to read.
        Events {
            parser,
            event: MaybeUninit::uninit(),
            has_event: false,
            done: !ok,
            _text: std::marker::PhantomData,
        }
    }

    fn delete_event(&mut self) {
        if self.has_event {
            // SAFETY: `has_event` says yaml_parser_parse filled `event` and it was not deleted
            // since; deleting frees what libyaml allocated for it.
            unsafe { unsafe_libyaml::yaml_event_delete(self.event.as_mut_ptr()) };
            self.has_event = false;
        }
    }

    /// The next event, borrowed until the next call.
    fn next(&mut self) -> Option<Event<'_>> {
        self.delete_event();
        if self.done {
            return None;
        }
        // SAFETY: the parser was initialised in `new` (`done` is false) and is not shared;
        // `event` is writable storage that yaml_parser_parse fills on success.
        let ok = unsafe {
            unsafe_libyaml::yaml_parser_parse(self.parser.as_mut_ptr(), self.event.as_mut_ptr()).ok
        };
        if !ok {
            self.done = true;
            return None;
        }
        self.has_event = true;
        // SAFETY: yaml_parser_parse succeeded, so `event` is initialised.
        let event = unsafe { self.event.assume_init_ref() };
        let line = event.start_mark.line + 1;
        // SAFETY: each arm reads the union member that libyaml fills for the event's type;
        // anchors are NUL-terminated strings owned by the event, alive until it is deleted
        // (the returned borrow of `self` ends before that); a scalar's length is its value's.
        let out = unsafe {
            match event.type_ {
                unsafe_libyaml::YAML_STREAM_END_EVENT => {
                    self.done = true;
                    Event::Other
                }
                unsafe_libyaml::YAML_DOCUMENT_START_EVENT => Event::DocumentStart,
                unsafe_libyaml::YAML_SCALAR_EVENT => Event::Scalar(
                    c_bytes(event.data.scalar.anchor),
                    event.data.scalar.length as usize,
                ),
                unsafe_libyaml::YAML_SEQUENCE_START_EVENT => {
                    Event::CollectionStart(c_bytes(event.data.sequence_start.anchor), line)
                }
                unsafe_libyaml::YAML_MAPPING_START_EVENT => {
                    Event::CollectionStart(c_bytes(event.data.mapping_start.anchor), line)
                }
                unsafe_libyaml::YAML_SEQUENCE_END_EVENT
                | unsafe_libyaml::YAML_MAPPING_END_EVENT => Event::CollectionEnd,
                unsafe_libyaml::YAML_ALIAS_EVENT => match c_bytes(event.data.alias.anchor) {
                    Some(name) => Event::Alias(name, line),
                    None => Event::Other,
                },
                _ => Event::Other,
            }
        };
        Some(out)
    }
}

/// The bytes of a NUL-terminated string, or `None` for a null pointer.
///
/// # Safety
///
/// `p` is null or points to a NUL-terminated string that outlives the returned slice.
unsafe fn c_bytes<'e>(p: *const u8) -> Option<&'e [u8]> {
    if p.is_null() {
        return None;
    }
    // SAFETY: the caller promises a NUL-terminated string alive for 'e.
    Some(unsafe { std::ffi::CStr::from_ptr(p.cast()) }.to_bytes())
}

impl Drop for Events<'_> {
    fn drop(&mut self) {
        self.delete_event();
        // SAFETY: yaml_parser_initialize ran in `new`; it zeroes the parser before building
        // it, and yaml_parser_delete frees only what is not null, so this is right whether it
        // succeeded or not. Nothing uses the parser afterwards.
        unsafe { unsafe_libyaml::yaml_parser_delete(self.parser.as_mut_ptr()) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(depth: usize) -> String {
        format!("targets: {}{}\n", "[".repeat(depth), "]".repeat(depth))
    }

    #[test]
    fn depth_counts_every_collection_the_parser_sees() {
        // The root mapping is one level: 127 brackets reach 128.
        check(&flow(MAX_DEPTH - 1)).unwrap();
        let e = check(&flow(MAX_DEPTH)).unwrap_err();
        assert_eq!(
            e,
            "line 1: nested deeper than 128 levels (the limit for watch files and manifests)"
        );
        // Tags, anchors and explicit tags in front of the brackets are the same levels.
        for prefix in ["!t ", "&a ", "!!seq ", "&a !t "] {
            let ok = format!(
                "x: {}1{}",
                format!("{prefix}[").repeat(MAX_DEPTH - 1),
                "]".repeat(MAX_DEPTH - 1)
            );
            check(&ok).unwrap_or_else(|e| panic!("{prefix}: {e}"));
            let deep =
                format!("x: {}1{}", format!("{prefix}[").repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
            assert!(check(&deep).unwrap_err().contains("nested deeper than 128"), "{prefix}");
        }
        // Block collections, on the line where the 129th starts.
        let block: String = (0..200).map(|i| format!("{}k{i}:\n", "  ".repeat(i))).collect();
        assert!(check(&block).unwrap_err().starts_with("line 129: nested deeper"));
        let seqs = format!("targets:\n{}x\n", "- ".repeat(300));
        assert!(check(&seqs).unwrap_err().starts_with("line 2: nested deeper"));
        // Nesting inside block scalars and quotes is text.
        let text = format!("a: |\n  {}\nb: '{}'\n", "[".repeat(500), "{".repeat(500));
        check(&text).unwrap();
    }

    #[test]
    fn deep_tagged_nesting_is_refused_in_linear_time() {
        // 25,000 levels of `!t [` (the sample) and 10 times as much: both stop at
        // level 129, so both take about as long as reading 129 levels.
        for levels in [25_000, 250_000] {
            let text = format!("x: {}1{}", "!t [".repeat(levels), "]".repeat(levels));
            let e = check(&text).unwrap_err();
            assert!(e.starts_with("line 1: nested deeper than 128"), "{e}");
        }
    }

    #[test]
    fn an_alias_counts_as_the_levels_it_stands_for() {
        let inner = format!("{}1{}", "[".repeat(100), "]".repeat(100));
        // 100 levels anchored at depth 2, used at depth 2: 102, fine.
        check(&format!("a: &x {inner}\nb: *x\n")).unwrap();
        // Used 30 levels down: 131.
        let deep = format!("a: &x {inner}\nb: {}*x{}\n", "[".repeat(30), "]".repeat(30));
        let e = check(&deep).unwrap_err();
        assert_eq!(
            e,
            "line 2: alias *x nests deeper than 128 levels (the limit for watch files and manifests)"
        );
    }

    #[test]
    fn aliases_are_bounded_by_what_they_expand_to() {
        // The sample, scaled down: a list of aliases of a 100 KB string, aliased by
        // many targets. The file is small; its expansion is not.
        let big = "x".repeat(100_000);
        let mut text = format!("s: &s {big}\nl: &l [{}]\ntargets:\n", vec!["*s"; 1000].join(", "));
        for i in 0..1000 {
            text.push_str(&format!("- name: t{i}\n  env: *l\n"));
        }
        let e = check(&text).unwrap_err();
        assert!(e.starts_with("line 2: alias *s repeats more than the file may"), "{e}");
        // The billion laughs: each level nine of the one before.
        let mut laughs = String::from("a: &a [x, x, x, x, x, x, x, x, x]\n");
        for (prev, name) in ('a'..='i').zip('b'..='j') {
            laughs.push_str(&format!(
                "{name}: &{name} [{}]\n",
                vec![format!("*{prev}"); 9].join(", ")
            ));
        }
        let e = check(&laughs).unwrap_err();
        assert!(e.contains("may add at most 1048576 bytes"), "{e}");
        // Zero-length values are not free: 10^6 aliases of an empty scalar.
        let mut empties = String::from("e: &e ''\nl1: &l1 [");
        empties.push_str(&vec!["*e"; 1000].join(","));
        empties.push_str("]\nl2: [");
        empties.push_str(&vec!["*l1"; 1000].join(","));
        empties.push_str("]\n");
        assert!(check(&empties).unwrap_err().contains("alias *l1 repeats more than the file may"));
    }

    #[test]
    fn ordinary_anchors_pass() {
        // One probe shared by many targets: what anchors are for.
        let mut text =
            String::from("common: &p {tcpSocket: {port: 1}, periodSeconds: 5}\ntargets:\n");
        for i in 0..10_000 {
            text.push_str(&format!("- name: t{i}\n  readinessProbe: *p\n"));
        }
        check(&text).unwrap();
        // A redefined anchor: an alias names the latest definition (as serde_norway reads it).
        let big = "x".repeat(2_000_000);
        let text = format!("a: &s {big}\nb: &s y\nc: [{}]\n", vec!["*s"; 1000].join(","));
        check(&text).unwrap();
        // Anchors are per document: a later document cannot name an earlier one's.
        let text = format!("a: &s {big}\n---\nb: [{}]\n", vec!["*s"; 1000].join(","));
        check(&text).unwrap();
    }

    #[test]
    fn an_alias_inside_its_own_node_is_refused() {
        let e = check("a: &a [1, *a]\n").unwrap_err();
        assert_eq!(e, "line 1: alias *a is inside the node it names (it would never end)");
        // Unless a definition inside took the name over (serde_norway reads it so): then the
        // alias, and every later one, is the inner node.
        let big = "x".repeat(200_000);
        let inner = format!("a: &a [{big}, &a y, *a]\nb: [{}]\n", vec!["*a"; 1000].join(","));
        check(&inner).unwrap();
    }

    #[test]
    fn syntax_errors_are_left_to_the_deserializer() {
        check("a: [1, 2\n").unwrap();
        check("a: *nowhere\n").unwrap();
        check("\t- x: [").unwrap();
        check("").unwrap();
    }

    #[test]
    fn real_documents_pass_and_depth_is_exact() {
        // Real documents pass: quoted brackets, comments, plain scalars with brackets and
        // quotes, block scalars holding anything, compact and nested sequences.
        let ok = "# comment [[[[\n\
            kind: Pod\n\
            metadata: {name: \"a[b\", labels: {x: 'it''s [not'}}\n\
            spec:\n\
            \x20 containers:\n\
            \x20 - name: c\n\
            \x20   args: [sh, -c, \"echo [[[ {{{\"]\n\
            \x20   note: don't [count] this, nor a[b\n\
            \x20   script: |\n\
            \x20     [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n\
            \x20       - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - -\n\
            \x20   readinessProbe:\n\
            \x20     httpGet: {port: 80, httpHeaders: [{name: A, value: '[x'}]}\n";
        check(ok).unwrap();
        let mut nested = String::new();
        for i in 0..MAX_DEPTH {
            nested.push_str(&format!("{}k{i}:\n", " ".repeat(i)));
        }
        check(&nested).unwrap();
        nested.push_str(&format!("{}deeper: 1\n", " ".repeat(MAX_DEPTH)));
        assert_eq!(
            check(&nested).unwrap_err(),
            "line 129: nested deeper than 128 levels (the limit for watch files and manifests)"
        );
        let flow = |n: usize| format!("a: {}{}", "[".repeat(n), "]".repeat(n));
        check(&flow(MAX_DEPTH - 1)).unwrap();
        assert!(check(&flow(MAX_DEPTH)).is_err());
        assert!(check(&format!("{}x", "- ".repeat(MAX_DEPTH + 1))).is_err());
        assert!(check(&format!("{{\"a\": {}}}", "{\"b\": ".repeat(200))).is_err());
    }
}
