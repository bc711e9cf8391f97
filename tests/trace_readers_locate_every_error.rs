//! Property: the HBM trace reader never panics and never reads more than a line's cap, and
//! every error it reports is located at line:col; addresses past the memory's capacity and
//! lines without a newline are refused; an accepted trace runs through `trnsim hbm` in
//! bounded time whatever its idle gaps. Inputs are generated request lines with hostile
//! numbers and byte-level mutations, from a fixed seed.

use crate::common::{fuzz_bytes, hostile_number, is_located, mutate, scratch, trnsim, FuzzBudget};
use arbitrary::Unstructured;
use std::io::Cursor;
use trnsim_harness::memtrace::{TraceFormat, TraceReader, MAX_LINE_BYTES};

fn generated(u: &mut Unstructured<'_>) -> String {
    let mut s = String::new();
    let lines = 1 + u.choose_index(20).unwrap_or(0);
    let dramsim = u.ratio(1, 2).unwrap_or(true);
    let mut cycle = 0u64;
    for _ in 0..lines {
        let addr =
            if u.ratio(3, 4).unwrap_or(true) { u.int_in_range(0..=1u64 << 34).unwrap_or(0) } else { hostile_number(u) };
        cycle = cycle.saturating_add(if u.ratio(3, 4).unwrap_or(true) {
            u.int_in_range(0..=10u64).unwrap_or(0)
        } else {
            hostile_number(u)
        });
        if dramsim {
            let op = ["READ", "WRITE"][u.choose_index(2).unwrap_or(0)];
            s += &format!("{addr:#x} {op} {cycle}\n");
        } else {
            let op = ["LD", "ST"][u.choose_index(2).unwrap_or(0)];
            s += &format!("{op} {addr:#x}\n");
        }
    }
    s
}

#[test]
fn fuzz_traces_are_read_or_refused_at_line_and_column() {
    let budget = FuzzBudget::from_env(600);
    let capacity = 1u64 << 34;
    let dir = scratch("fuzz_traces");
    let mut runs = budget.cases / 60 + 1;
    for seed in budget.seeds() {
        let bytes = fuzz_bytes(seed, 4096);
        let mut u = Unstructured::new(&bytes);
        let mut text = generated(&mut u);
        if u.ratio(1, 2).unwrap_or(false) {
            text = mutate(&text, &mut u);
        }
        let r = std::panic::catch_unwind(|| {
            let reader =
                TraceReader::new(Cursor::new(text.as_bytes()), "t.trace", TraceFormat::Auto).with_capacity(capacity);
            for item in reader.take(100) {
                match item {
                    Ok(req) => assert!(req.addr < capacity && req.cycle.is_none_or(|c| c <= 1_000_000_000_000)),
                    Err(e) => {
                        let s = e.to_string();
                        assert!(is_located(&s), "unlocated: {s}");
                        assert!(e.line == 0 || e.col >= 1, "{s}");
                        return false;
                    }
                }
            }
            true
        });
        let accepted = r.unwrap_or_else(|_| panic!("reader panicked on\n{text}"));
        if accepted && runs > 0 {
            // Capacity 2^34 bytes: below the 36 GiB of the preset's stack.
            runs -= 1;
            let f = dir.join(format!("{seed}.trace"));
            std::fs::write(&f, &text).unwrap();
            let t = std::time::Instant::now();
            let out = trnsim().args(["hbm", "--preset", "hbm3e-9600", "--trace"]).arg(&f).output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(0), "accepted trace failed: {err}\n{text}");
            assert!(t.elapsed().as_secs() < 60, "took {:?} on\n{text}", t.elapsed());
        }
    }
}

#[test]
fn a_line_without_a_newline_is_capped() {
    let long = "0x1".repeat(MAX_LINE_BYTES);
    let mut r = TraceReader::new(Cursor::new(long.as_bytes()), "t.trace", TraceFormat::Auto);
    let e = r.next().expect("an item").expect_err("refused");
    assert_eq!((e.line, e.col, e.field), (1, MAX_LINE_BYTES as u64 + 1, "line"), "{e}");
}
