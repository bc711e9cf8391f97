//! The line loop: sections, labels, branch resolution and error collection.

use std::collections::HashMap;

use super::check::{self, Stationary};
use super::lex::{fail, tokenize, Cursor, LineError, Tok, Token};
use super::parse::{self, label_word};
use super::{AsmError, AsmOptions};
use crate::isa::{Engine, Instr, Program, Stream};

type R<T> = Result<T, LineError>;

/// Where something was written: line number, line text, byte offset.
#[derive(Clone, Copy)]
struct Place<'a> {
    line: u32,
    text: &'a str,
    at: u32,
}

/// A branch whose label is resolved when its section closes.
struct Fixup<'a> {
    index: usize,
    name: &'a str,
    place: Place<'a>,
}

/// The section being assembled. `engine` is `None` after a bad or duplicate `.engine` header
/// (or before any): its lines are still checked, but it yields no stream.
struct Section<'a> {
    engine: Option<Engine>,
    stream: Stream,
    labels: HashMap<&'a str, (usize, Place<'a>)>,
    fixups: Vec<Fixup<'a>>,
    stationary: Option<Stationary>,
}

impl Section<'_> {
    fn new(engine: Option<Engine>) -> Self {
        Section { engine, stream: Stream::default(), labels: HashMap::new(), fixups: Vec::new(), stationary: None }
    }
}

struct Asm<'a, 'o> {
    source: &'o str,
    opts: &'o AsmOptions,
    toks: Vec<Token<'a>>,
    streams: Vec<(Engine, Stream)>,
    cur: Option<Section<'a>>,
    headers: [Option<u32>; Engine::ALL.len()],
    errors: Vec<AsmError>,
}

/// Assembles `text`; see [`super::assemble`].
pub(super) fn run(source: &str, text: &str, opts: &AsmOptions) -> Result<Program, Vec<AsmError>> {
    let mut a = Asm {
        source,
        opts,
        toks: Vec::new(),
        streams: Vec::new(),
        cur: None,
        headers: [None; Engine::ALL.len()],
        errors: Vec::new(),
    };
    let cap = opts.max_errors.max(1);
    for (i, text) in text.split('\n').enumerate() {
        a.line(u32::try_from(i + 1).unwrap_or(u32::MAX), text);
        if a.errors.len() >= cap {
            break;
        }
    }
    a.close();
    if a.errors.is_empty() {
        return Ok(Program { source: source.to_string(), streams: a.streams });
    }
    a.errors.sort_by_key(|e| (e.line, e.column));
    a.errors.truncate(cap);
    Err(a.errors)
}

impl<'a> Asm<'a, '_> {
    fn line(&mut self, line: u32, text: &'a str) {
        let mut toks = std::mem::take(&mut self.toks);
        if let Err(e) = self.statement(line, text, &mut toks) {
            self.error(Place { line, text, at: e.at }, e.field, e.msg);
        }
        self.toks = toks;
    }

    fn error(&mut self, p: Place<'_>, field: &str, message: String) {
        let column = p.text.get(..p.at as usize).map_or(p.at as usize, |s| s.chars().count());
        let column = u32::try_from(column + 1).unwrap_or(u32::MAX);
        let (source, field) = (self.source.to_string(), field.to_string());
        self.errors.push(AsmError { source, line: p.line, column, field, message });
    }

    fn statement(&mut self, line: u32, text: &'a str, toks: &mut Vec<Token<'a>>) -> R<()> {
        tokenize(text, toks)?;
        let mut c = Cursor::new(toks, text.len() as u32);
        if let (Some(Tok::Word(w)), Some(Tok::Colon)) = (c.peek(), c.peek2()) {
            let at = c.at();
            c.bump();
            c.bump();
            self.label(w, Place { line, text, at })?;
        }
        match c.peek() {
            None => Ok(()),
            Some(Tok::Word(w)) if w.starts_with('.') => self.directive(line, &mut c),
            _ => self.instruction(Place { line, text, at: c.at() }, &mut c),
        }
    }

    /// The open section; before any `.engine`, an error (once: a headless section opens).
    fn section(&mut self, at: u32, field: &'static str) -> R<&mut Section<'a>> {
        match self.cur {
            Some(ref mut s) => Ok(s),
            None => {
                self.cur = Some(Section::new(None));
                fail(at, field, "no `.engine` section is open (start one with `.engine NAME`)")
            }
        }
    }

    fn label(&mut self, name: &'a str, place: Place<'a>) -> R<()> {
        if !label_word(name) {
            return fail(place.at, "label", format!("`{name}` is not a label name ([A-Za-z_][A-Za-z0-9_]*)"));
        }
        let sec = self.section(place.at, "label")?;
        if let Some((_, first)) = sec.labels.get(name) {
            return fail(place.at, "label", format!("label `{name}` is already defined at line {}", first.line));
        }
        sec.labels.insert(name, (sec.stream.instrs.len(), place));
        sec.stationary = None;
        Ok(())
    }

    fn directive(&mut self, line: u32, c: &mut Cursor<'_, 'a>) -> R<()> {
        let (d, at) = c.word("directive", "a directive")?;
        if d != ".engine" {
            return fail(at, "directive", format!("unknown directive `{d}` (expected `.engine`)"));
        }
        self.close();
        self.cur = Some(Section::new(None));
        let (name, at) = c.word("engine", "an engine name")?;
        let Some(e) = Engine::from_name(name) else {
            let names: Vec<&str> = Engine::ALL.iter().map(|e| e.name()).collect();
            return fail(at, "engine", format!("unknown engine `{name}` (expected {})", names.join(", ")));
        };
        let slot = Engine::ALL.iter().position(|x| *x == e).unwrap_or(0);
        if let Some(first) = self.headers[slot] {
            return fail(
                at,
                "engine",
                format!("engine `{name}` already has a section at line {first} (one per engine)"),
            );
        }
        c.finish()?;
        self.headers[slot] = Some(line);
        self.cur = Some(Section::new(Some(e)));
        Ok(())
    }

    fn instruction(&mut self, place: Place<'a>, c: &mut Cursor<'_, 'a>) -> R<()> {
        let opts = self.opts;
        let sec = self.section(place.at, "mnemonic")?;
        let parsed = parse::instruction(c, opts)?;
        check::check(&parsed, sec.engine, place.at, place.line, &mut sec.stationary, opts.psum_partitions)?;
        if let Some((name, at)) = parsed.target {
            let index = sec.stream.instrs.len();
            sec.fixups.push(Fixup { index, name, place: Place { at, ..place } });
        }
        sec.stream.instrs.push(parsed.instr);
        sec.stream.lines.push(place.line);
        Ok(())
    }

    /// Closes the open section: resolves its branches, reports labels that mark no instruction
    /// and keeps its stream if its header was good.
    fn close(&mut self) {
        let Some(mut sec) = self.cur.take() else { return };
        let len = sec.stream.instrs.len();
        for f in &sec.fixups {
            match (sec.labels.get(f.name), sec.stream.instrs.get_mut(f.index)) {
                (Some(&(index, _)), Some(Instr::Branch { target, .. })) => *target = index as u32,
                _ => self.error(f.place, "target", format!("undefined label `{}`", f.name)),
            }
        }
        for (name, (index, place)) in &sec.labels {
            if *index >= len {
                let msg = format!("label `{name}` marks no instruction (nothing follows it in this section)");
                self.error(*place, "label", msg);
            }
        }
        if let Some(e) = sec.engine {
            self.streams.push((e, sec.stream));
        }
    }
}
