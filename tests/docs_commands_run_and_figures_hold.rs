//! Every command a doc shows runs, and every figure it quotes from a command's output holds
//! within the stated tolerance (the rules: `doc_blocks.rs` and README.md, "Docs are
//! executed"). One test per doc, so the docs run side by side on the test threads; each
//! doc's commands run in order in a scratch folder of their own (a later command may read
//! what an earlier one wrote), but for those that name no file, which a second thread runs
//! ahead (`doc_blocks::prefetch`). Commands run the test build's `trnsim`.

use crate::common::{root, trnsim};
use crate::doc_blocks::{check_output, line_matches, parse, prefetch, run_steps, shareable, Expect, Run, Workspace};
use std::path::PathBuf;
use std::time::Duration;

/// The longest a doc's command may take in the test (the dev build): a longer run needs a
/// smaller size marked `[tested as: ...]`.
const LIMIT: Duration = Duration::from_secs(240);

/// Docs whose commands the test does not run yet, and why. Every other doc under docs/ (and
/// README.md) is checked; `every_doc_is_checked_or_named_here` keeps the two lists whole.
const NOT_CHECKED: &[(&str, &str)] = &[];

fn bin() -> PathBuf {
    let cmd = trnsim();
    PathBuf::from(cmd.get_program()).canonicalize().expect("the trnsim binary")
}

/// Parses `doc`, runs its commands and panics with every failure, one a line.
fn check_doc(doc: &str) {
    let text = std::fs::read_to_string(root().join(doc)).unwrap_or_else(|e| panic!("{doc}: {e}"));
    let steps = parse(doc, &text).unwrap_or_else(|e| panic!("{e}"));
    let ws = Workspace::new(&format!("docs/{}", doc.replace('/', "_")), &bin());
    // The commands that name no file run beside the others, on a thread of their own.
    let ahead = prefetch(&steps, &ws, LIMIT);
    let out = run_steps(doc, &steps, &ws, LIMIT);
    let _ = ahead.join();
    let total = out.times.iter().fold(0.0, |a, t| a + t.1); // (0.0, not the empty sum's -0.0)
    eprintln!("{doc}: {} commands in {total:.1} s", out.times.len());
    for (line, t) in &out.times {
        eprintln!("  {doc}:{line}: {t:.1} s");
    }
    record_skips(doc, &steps, &out.skipped);
    assert!(out.errors.is_empty(), "{} of {doc}'s commands failed:\n{}", out.errors.len(), out.errors.join("\n"));
}

/// Counts the test as skipped (never passed) when commands were not run for want of what
/// they need. A feature of the test build (`rtl`, `mpi`) is one `make test` and CI build, so
/// its absence is `skip_test`'s (which refuses to skip in CI); a reference tool is built
/// outside the repository, never in CI, so its absence is recorded alone.
fn record_skips(doc: &str, steps: &[crate::doc_blocks::Step], skipped: &[String]) {
    if skipped.is_empty() {
        return;
    }
    let why = format!("{} of {doc}'s commands not run: {}", skipped.len(), skipped.join("; "));
    let feature = steps.iter().any(|s| {
        matches!(s.needs.as_deref(), Some("rtl" | "mpi"))
            && skipped.iter().any(|k| k.starts_with(&format!("{doc}:{}: ", s.line)))
    });
    if feature {
        trnsim_traces::skip_test(&root(), &why);
    } else {
        let test = std::thread::current().name().unwrap_or("unnamed test").to_string();
        eprintln!("skipped: {test}: {why}");
        trnsim_traces::record_skip(&trnsim_traces::skip_log(&root()), &test, &why);
    }
}

macro_rules! doc_tests {
    ($($name:ident => $doc:literal),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                check_doc($doc);
            }
        )*
        /// The docs the tests above check.
        const CHECKED: &[&str] = &[$($doc),*];
    };
}

doc_tests! {
    readme => "README.md",
    tutorial_architect => "docs/tutorial-architect.md",
    whatif => "docs/whatif.md",
    performance => "docs/performance.md",
    scaleout => "docs/scaleout.md",
    architecture => "docs/architecture.md",
    dependencies => "docs/dependencies.md",
    energy => "docs/energy.md",
    fabric => "docs/fabric.md",
    isa => "docs/isa.md",
    multichip => "docs/multichip.md",
    neuroncore => "docs/neuroncore.md",
    sources => "docs/sources.md",
    system => "docs/system.md",
    memory => "docs/memory.md",
    validation => "docs/validation.md",
    parallel => "docs/parallel.md",
    tutorial_verification => "docs/tutorial-verification.md",
    rtl => "docs/rtl.md",
}

#[test]
fn every_doc_is_checked_or_named_here() {
    let mut docs: Vec<String> = std::fs::read_dir(root().join("docs"))
        .expect("docs/")
        .filter_map(|e| e.ok())
        .map(|e| format!("docs/{}", e.file_name().to_string_lossy()))
        .filter(|n| n.ends_with(".md"))
        .collect();
    docs.push("README.md".into());
    for d in &docs {
        let checked = CHECKED.contains(&d.as_str());
        let named = NOT_CHECKED.iter().any(|(n, _)| n == d);
        assert!(checked != named, "{d}: check it (doc_tests!) or name it in NOT_CHECKED with the reason, not both");
    }
}

/// A doc's block with one figure doctored: the check fails and names the line; the true
/// figure passes. Runs a real command of the binary, so the failure is the comparison's.
#[test]
fn a_doctored_figure_fails_and_the_true_one_passes() {
    let ws = Workspace::new("docs/doctored", &bin());
    let cmd = "trnsim describe hbm hbm3e-9600";
    let (code, out) = ws.run(cmd, LIMIT).expect("runs");
    assert_eq!(code, 0, "{out}");
    // The first line with a figure of more than one digit, as the doc would quote it.
    let line = out
        .lines()
        .find(|l| l.split_whitespace().any(|t| t.chars().filter(|c| c.is_ascii_digit()).count() > 1))
        .expect("a line with a figure");
    let doc = format!("```text\n$ {cmd}\n{line}\n```\n");
    let steps = parse("true.md", &doc).expect("parses");
    assert_eq!(steps.len(), 1);
    let errors = run_steps("true.md", &steps, &ws, LIMIT).errors;
    assert!(errors.is_empty(), "the true figure fails: {errors:?}");

    // Doctor the first multi-digit number by 10 %: beyond the shown digits, and beyond a
    // 5 % tolerance too.
    let doctored = doctor(line);
    for (opt, label) in [("", "digits shown"), (" tolerance=5%", "5 %")] {
        let doc = format!("```text{opt}\n$ {cmd}\n{doctored}\n```\n");
        let steps = parse("doctored.md", &doc).expect("parses");
        let errors = run_steps("doctored.md", &steps, &ws, LIMIT).errors;
        assert_eq!(errors.len(), 1, "a doctored figure passes ({label}): `{doctored}` against `{line}`");
        assert!(errors[0].starts_with("doctored.md:3: "), "names the doc's line: {}", errors[0]);
    }
}

/// A figure quoted in a table row, tied to its command by a figure comment: the true figure
/// passes, the same figure doctored by 10 % fails at the row's line, and a figure the output
/// does not hold fails too. A real command of the binary, run once (shared).
#[test]
fn a_doctored_figure_in_a_table_fails_and_the_true_one_passes() {
    let ws = Workspace::new("docs/doctored-prose", &bin());
    let cmd = "trnsim describe hbm hbm3e-9600";
    let (code, out) = ws.run(cmd, LIMIT).expect("runs");
    assert_eq!(code, 0, "{out}");
    let figure = |t: &str| {
        let n = crate::doc_blocks::numbers_of(t);
        n.len() == 1 && t.chars().all(|c| c.is_ascii_digit() || c == '.' || c == ',') && t.len() > 1
    };
    let line = out.lines().find(|l| l.split_whitespace().any(figure)).expect("a line with a figure");
    let tok = line.split_whitespace().find(|t| figure(t)).expect("its figure");
    let mut done = false;
    let pattern: Vec<&str> = line
        .split_whitespace()
        .map(|t| {
            if !done && t == tok {
                done = true;
                "{}"
            } else {
                t
            }
        })
        .collect();
    let pattern = pattern.join(" ");
    let doc = |cell: &str| {
        format!("Prose.\n\n<!-- figure: {cmd} ==> {pattern} ==> hbm3e -->\n| stack | figure |\n|---|---|\n| hbm3e | {cell} |\n")
    };
    let check = |name: &str, text: String| {
        let steps = parse(name, &text).expect("parses");
        assert_eq!(steps.len(), 1, "the comment is a step");
        run_steps(name, &steps, &ws, LIMIT).errors
    };
    assert!(check("true.md", doc(tok)).is_empty(), "the true figure `{tok}` of `{line}` fails");
    for bad in [doctor(tok), "1".into()] {
        let errors = check("doctored.md", doc(&bad));
        assert_eq!(errors.len(), 1, "a doctored figure `{bad}` passes against `{line}`");
        assert!(errors[0].starts_with("doctored.md:6: "), "names the row's line: {}", errors[0]);
    }
    // A figure comment that names no figure, or stands before nothing, is refused, located.
    for (bad, why) in [
        (format!("<!-- figure: {cmd} ==> {line} -->\n| a |\n"), "b.md:1: a figure comment names"),
        (format!("<!-- figure: {cmd} ==> {pattern} -->\n"), "b.md:1: no table or paragraph"),
        (format!("<!-- figure tol=1%: {cmd} ==> {pattern} -->\n| a |\n"), "b.md:1: `tol=1%`"),
    ] {
        let e = parse("b.md", &bad).expect_err(&bad);
        assert!(e.starts_with(why), "{bad:?}: {e}");
    }
}

/// The docs whose tables quote figures of long runs tie them to their commands: every such
/// figure comment parses into a step, and the rows the lead asked for are covered.
#[test]
fn tables_of_figures_are_tied_to_their_commands() {
    for (doc, rows) in [
        ("docs/validation.md", &["`trnsim run e2e-llm-layer`", "`trn3-chip` | BF16 GEMMs"][..]),
        (
            "docs/scaleout.md",
            &["`e2e-llm-layer` (every core", "dense 2-layer prefill", "dense training step", "MoE inference"][..],
        ),
    ] {
        let text = std::fs::read_to_string(root().join(doc)).unwrap_or_else(|e| panic!("{doc}: {e}"));
        let steps = parse(doc, &text).unwrap_or_else(|e| panic!("{e}"));
        for row in rows {
            let tied =
                steps.iter().filter_map(|s| s.figure.as_ref()).any(|f| f.target.iter().any(|(_, l)| l.contains(row)));
            assert!(tied, "{doc}: the row `{row}` has no figure comment");
        }
    }
}

/// `line` with its first number of two or more digits made 10 % larger.
fn doctor(line: &str) -> String {
    let start = line.find(|c: char| c.is_ascii_digit()).expect("a digit");
    let mut s = start;
    let b = line.as_bytes();
    let mut e = start;
    loop {
        while e < b.len() && (b[e].is_ascii_digit() || b[e] == b'.') {
            e += 1;
        }
        if e - s > 1 || e >= b.len() {
            break;
        }
        s = line[e..].find(|c: char| c.is_ascii_digit()).map_or(b.len(), |k| e + k);
        e = s;
    }
    let v: f64 = line[s..e].parse().expect("a number");
    let decimals = line[s..e].split('.').nth(1).map_or(0, str::len);
    format!("{}{:.*}{}", &line[..s], decimals, v * 1.1 + 1.0, &line[e..])
}

/// A real doc's figure, doctored as it drifted once (an error located at the line the chip
/// file had before a field was added): the doc as written passes, the doctored one fails at
/// that line. The command is an error, so it runs in milliseconds.
#[test]
fn a_drifted_figure_in_a_doc_fails_at_its_line() {
    let doc = "docs/whatif.md";
    let text = std::fs::read_to_string(root().join(doc)).expect("docs/whatif.md");
    let steps = parse(doc, &text).expect("parses");
    let located = |s: &&crate::doc_blocks::Step| {
        s.expect.as_ref().is_some_and(|e| e.lines.iter().any(|(_, l)| l.contains("dma.queues: 99 is out of range")))
    };
    let step = steps.iter().find(located).expect("whatif.md shows the out-of-range --set error").clone();
    let ws = Workspace::new("docs/drifted", &bin());
    let errors = run_steps(doc, std::slice::from_ref(&step), &ws, LIMIT).errors;
    assert!(errors.is_empty(), "the doc as written fails: {errors:?}");

    // The line number in `file:line:col` one less: a figure of the output, so the check fails.
    let mut doctored = step.clone();
    let expect = doctored.expect.as_mut().expect("output shown");
    let (line, shown) = expect.lines.iter_mut().find(|(_, l)| l.contains("dma.queues")).expect("the error line");
    let at = shown.find(".ron (built in):").expect("a located error") + ".ron (built in):".len();
    let end = at + shown[at..].find(':').expect("line:col");
    let n: u32 = shown[at..end].parse().expect("a line number");
    *shown = format!("{}{}{}", &shown[..at], n - 1, &shown[end..]);
    let line = *line;
    let errors = run_steps(doc, &[doctored], &ws, LIMIT).errors;
    assert_eq!(errors.len(), 1, "a drifted location passes: {errors:?}");
    assert!(errors[0].starts_with(&format!("{doc}:{line}: ")), "names the doc's line: {}", errors[0]);
}

#[test]
fn a_failing_command_fails_the_doc() {
    let ws = Workspace::new("docs/failing", &bin());
    let doc = "```sh\ntrnsim run no-such-benchmark\n```\n";
    let steps = parse("f.md", doc).expect("parses");
    let errors = run_steps("f.md", &steps, &ws, LIMIT).errors;
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].starts_with("f.md:2: `trnsim run no-such-benchmark` exited 2, not 0"), "{}", errors[0]);
    // Shown as an error, the same command passes: it exits 2 and prints the line.
    let (_, out) = ws.run("trnsim run no-such-benchmark", LIMIT).expect("runs");
    let doc = format!("```text\n$ trnsim run no-such-benchmark\n{}\n```\n", out.lines().next().unwrap_or(""));
    let errors = run_steps("e.md", &parse("e.md", &doc).expect("parses"), &ws, LIMIT).errors;
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn figures_match_to_the_digits_shown_or_the_tolerance() {
    // Digits shown: 5536.6 stands for 5536.55..=5536.65.
    assert!(line_matches("step time 5536.6 us", "step time   5536.598 us", 0.0));
    assert!(!line_matches("step time 5536.6 us", "step time 5536.7 us", 0.0));
    // Thousands separators, signs, units glued on, words exact.
    assert!(line_matches("4,545 GB/s", "4545.2 GB/s", 0.0));
    assert!(!line_matches("4,545 GB/s", "4615.2 GB/s", 0.0));
    assert!(line_matches("4,545 GB/s", "4615.2 GB/s", 0.02));
    assert!(line_matches("dev -0.7 %", "dev -0.71 %", 0.0));
    assert!(!line_matches("dev -0.7 %", "dev +0.7 %", 0.0));
    assert!(line_matches("Avg 127.5GB/s", "Avg 127.5298GB/s", 0.0));
    assert!(!line_matches("Avg 127.5GB/s", "Avg 127.5298GiB/s", 0.0));
    // An error's location is figures too: 28 is not 31.
    assert!(!line_matches("x.ron:28:9: dma.queues", "x.ron:31:9: dma.queues", 0.0));
    assert!(!line_matches("tp-matmul-4 56275.8", "tp-matmul-16 56275.8", 0.0));
    // `...` at the end: the rest of the line left out; `[..]`: any one token.
    assert!(line_matches("tp-matmul-4 trn3 120ns ...", "tp-matmul-4 trn3 120ns 4 55465.8 619.5", 0.0));
    assert!(!line_matches("tp-matmul-4 trn3 120ns", "tp-matmul-4 trn3 120ns 4", 0.0));
    assert!(line_matches("took [..] s", "took 3.2 s", 0.0));
}

#[test]
fn lines_shown_must_appear_in_order() {
    let e = Expect { lines: vec![(2, "b 2".into()), (3, "a 1".into())], tolerance: 0.0 };
    assert!(check_output("o.md", &e, "a 1\nb 2\na 1\n").is_ok());
    let err = check_output("o.md", &e, "a 1\nb 2\n").expect_err("a 1 comes before b 2");
    assert!(err.starts_with("o.md:3: "), "{err}");
}

#[test]
fn markers_say_what_runs() {
    let doc = "```sh\nalias trnsim=$PWD/target/release/trnsim\n\
               trnsim run tp-matmul-64   # 64 chips [tested as: trnsim run tp-matmul-4]\n\
               make run   # the suite [not tested: it builds a release binary]\n\
               trnsim workload llm --layers 2 \\\n  --hidden 64 -o w.ron  # a comment\n```\n";
    let s = parse("m.md", doc).expect("parses");
    assert_eq!(s.len(), 4);
    assert!(matches!(&s[0].run, Run::Skip(_)));
    assert_eq!(s[1].run, Run::Cmd("trnsim run tp-matmul-4".into()));
    assert_eq!(s[2].run, Run::Skip("it builds a release binary".into()));
    assert_eq!(s[3].run, Run::Cmd("trnsim workload llm --layers 2 --hidden 64 -o w.ron".into()));
    assert_eq!(s[3].line, 5);
    let e = parse("m.md", "```sh\ntrnsim diff x  # [needs: rtl] [exits: 1]\n```\n").expect("parses");
    assert_eq!((e[0].needs.as_deref(), e[0].exits), (Some("rtl"), Some(1)), "markers side by side");
    // A replacement that is another command, output shown for a replaced command, an unknown
    // block option and a command in an indented block are refused, located.
    for (bad, why) in [
        ("```sh\ntrnsim run a  # [tested as: trnsim hbm b]\n```\n", "m.md:2: [tested as"),
        ("```text\n$ trnsim run a  # [tested as: trnsim run b]\nx\n```\n", "m.md:2: a command with output"),
        ("```text tol=2%\n$ trnsim run a\n```\n", "m.md:1: unknown block option"),
        ("text\n\n    trnsim run a\n", "m.md:3: a command in an indented block"),
        ("```sh\ntrnsim run a\n", "m.md:1: code block never closed"),
        ("```sh\ntrnsim run a  # [exits: one]\n```\n", "m.md:2: [exits: one] is not an exit code"),
    ] {
        let e = parse("m.md", bad).expect_err(bad);
        assert!(e.starts_with(why), "{bad:?}: {e}");
    }
}

/// A command that needs what is missing is counted as skipped: not run, not passed. The same
/// command with what it needs present runs, and its figure is checked.
#[test]
fn a_command_needing_a_missing_tool_is_skipped_not_passed() {
    let ws = Workspace::new("docs/needs", &bin());
    let missing = "```text\n$ no-such-reference-tool --run  # [needs: no-such-reference-tool]\nfigure 1.0\n```\n";
    let out = run_steps("n.md", &parse("n.md", missing).expect("parses"), &ws, LIMIT);
    assert!(out.errors.is_empty() && out.times.is_empty(), "{out:?}");
    assert_eq!(out.skipped, ["n.md:2: needs no-such-reference-tool"]);
    let present = "```text\n$ echo figure 1.0  # [needs: bash]\nfigure 1.1\n```\n";
    let out = run_steps("p.md", &parse("p.md", present).expect("parses"), &ws, LIMIT);
    assert!(out.skipped.is_empty(), "{out:?}");
    assert_eq!(out.errors.len(), 1, "a wrong figure of a command whose tool is present fails: {out:?}");
}

/// validation.md's saturated HBM figure against Ramulator 2, doctored by 2 % (beyond the
/// block's 1 % tolerance): the doc as written passes, the doctored one fails at that line.
/// Runs the doc's own trace command first (the figure's input), then the run once: both
/// expectations are checked against its one output, as `run_steps` checks a doc's.
#[test]
fn a_doctored_reference_comparison_in_validation_fails_at_its_line() {
    let doc = "docs/validation.md";
    let text = std::fs::read_to_string(root().join(doc)).expect("docs/validation.md");
    let steps = parse(doc, &text).expect("parses");
    let trace = steps
        .iter()
        .find(|s| matches!(&s.run, Run::Cmd(c) if c.ends_with("> rand32.trace")))
        .expect("validation.md draws rand32.trace")
        .clone();
    let shows = |s: &&crate::doc_blocks::Step| {
        s.shown.contains("--trace rand32.trace")
            && s.shown.ends_with("--refresh all-bank --refresh-schedule simultaneous")
            && s.expect.is_some()
    };
    let step = steps.iter().find(shows).expect("validation.md shows the saturated all-bank run").clone();
    let ws = Workspace::new("docs/doctored-validation", &bin());
    let errors = run_steps(doc, std::slice::from_ref(&trace), &ws, LIMIT).errors;
    assert!(errors.is_empty(), "the doc's trace command fails: {errors:?}");
    let Run::Cmd(cmd) = &step.run else { panic!("the saturated run is run as shown") };
    let (code, output) = ws.run(cmd, LIMIT).expect("runs");
    assert_eq!(code, 0, "{output}");
    let expect = step.expect.as_ref().expect("output shown");
    assert!(
        check_output(doc, expect, &output).is_ok(),
        "the doc as written fails: {:?}",
        check_output(doc, expect, &output)
    );

    let mut doctored = expect.clone();
    assert!(doctored.tolerance > 0.0 && doctored.tolerance < 0.02, "a tolerance under 2 %: {}", doctored.tolerance);
    let (line, shown) =
        doctored.lines.iter_mut().find(|(_, l)| l.contains("bandwidth_GBps")).expect("the bandwidth line");
    let v: f64 = shown.split_whitespace().last().and_then(|t| t.parse().ok()).expect("a figure");
    *shown = format!("  bandwidth_GBps {:.3}", v * 1.02);
    let line = *line;
    let err = check_output(doc, &doctored, &output).expect_err("a figure 2 % off passes");
    assert!(err.starts_with(&format!("{doc}:{line}: ")), "names the doc's line: {err}");
}

/// A command that names no file (so reads and writes none of its folder) runs once for every
/// doc that shows it; one that names a file, redirects or is not `trnsim` runs in each.
#[test]
fn a_command_naming_no_file_is_run_once_for_every_doc() {
    for c in [
        "trnsim run moe-alltoall-144 --fidelity fast",
        "trnsim bench parallel --threads 2 --reps 1",
        "trnsim diff --swap sw --cycles 200000 --load 1.0 --seed 7",
    ] {
        assert!(shareable(c), "{c}");
    }
    for c in [
        "trnsim run tp-matmul-4 --trace traces/out/tp.pftrace",
        "trnsim hbm --preset hbm3-6400 --trace lines.trace",
        "trnsim workload llm --layers 2 -o w.ron",
        "trnsim run tp-matmul-2 --sweep fabric.switch.latency=120ns,480ns",
        "trnsim run e2e-llm-layer > out.txt",
        "trnsim run e2e-llm-layer --rtl \"nc0.tensor.sem -> nc0.sem.tensor.op\"",
        "scripts/mpirun.sh -np 2 trnsim run --mpi dp-step-2:1M:1",
        "echo trnsim run e2e-llm-layer",
    ] {
        assert!(!shareable(c), "{c}");
    }
}
