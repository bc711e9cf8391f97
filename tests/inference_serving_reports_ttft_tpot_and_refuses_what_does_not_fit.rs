//! Inference serving: every model preset generates prefill and decode steps; a decode step's
//! KV cache is the closed form's bytes, its expert GEMMs run the experts the batch is
//! expected to hit, its attention is bound by the KV cache's read; runs report time to first
//! token, time per output token and tokens/s per chip and per user (text, JSON, compare);
//! and bad input (a layout that does not divide, an unknown preset, a format the chip lacks,
//! a model or KV cache over HBM) is one located line, exit 2, with nothing run.

use crate::common::{root, scratch, trnsim};
use trnsim_system::doc::SystemDoc;
use trnsim_workloads::costs::SystemCosts;
use trnsim_workloads::exec::Costs;
use trnsim_workloads::format::Op;
use trnsim_workloads::llm::preset::{ModelPreset, PRESETS};
use trnsim_workloads::llm::{Llm, Mode};

fn run(args: &[&str]) -> (i32, String, String) {
    let out = trnsim().args(args).current_dir(root()).output().expect("run trnsim");
    let s = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), s(&out.stdout), s(&out.stderr))
}

/// Exit 2 and one `error:` line holding every `want`, and no output file written.
fn refused(args: &[&str], want: &[&str]) {
    let (code, out, err) = run(args);
    assert_eq!(code, 2, "{args:?}: {err}");
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{args:?}: one line expected: {err}");
    assert!(lines[0].starts_with("error: "), "{err}");
    for w in want {
        assert!(lines[0].contains(w), "{args:?}: expected {w:?} in {err}");
    }
    assert!(!out.contains("step time"), "{args:?}: something ran: {out}");
}

fn preset(name: &str, mode: Mode) -> Llm {
    let base = Llm { mode, tp: 1, dp: 1, pp: 1, ep: 1, batch: 4, context: 1024, ..Llm::default() };
    ModelPreset::open(name).unwrap().apply(base)
}

#[test]
fn every_preset_generates_prefill_and_decode_steps_with_the_published_shapes() {
    for (name, _) in PRESETS {
        for mode in [Mode::Prefill, Mode::Decode] {
            let w = preset(name, mode).generate("test").unwrap_or_else(|e| panic!("{name}: {e}"));
            let s = w.serving.as_ref().expect("a serving section");
            assert_eq!((s.mode.as_str(), s.batch, s.context), (mode.name(), 4, 1024), "{name}");
            let text = trnsim_workloads::format::to_ron(&w).unwrap();
            trnsim_workloads::format::parse("t.ron", &text).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }
    let g = ModelPreset::open("gpt-oss-120b").unwrap();
    let shape = (g.layers, g.hidden, g.heads, g.kv_heads, g.head_dim, g.experts, g.top_k, g.vocab);
    assert_eq!(shape, (36, 2880, 64, 8, 64, 128, 4, 201088));
    assert_eq!((g.sliding_window, g.sliding_every, g.expert_weights.as_str()), (128, 2, "mxfp4"));
}

#[test]
fn the_kv_cache_and_the_experts_hit_follow_their_closed_forms() {
    // Llama 3.3 70B, TP 4, 8 sequences of 4096 cached tokens: 2 (K, V) x 8 / 4 KV heads x
    // 128 x 2 bytes x 4097 tokens x 80 layers x 8 sequences.
    let l = Llm { tp: 4, batch: 8, context: 4096, ..preset("llama-3.3-70b", Mode::Decode) };
    assert_eq!(l.kv_cache_bytes_per_rank(), 2 * 2 * 128 * 2 * 4097 * 80 * 8);
    // GPT-OSS-120B: half its layers slide over 128 tokens.
    let g = Llm { batch: 2, context: 4096, ..preset("gpt-oss-120b", Mode::Decode) };
    assert_eq!(g.kv_cache_bytes_per_rank(), 2 * 8 * 64 * 2 * (18 * 4097 + 18 * 128) * 2);
    // One token hits top_k = 4 experts: 128 x (1 - (1 - 4/128)^1) = 4 expert GEMMs, one token each.
    let w = Llm { batch: 1, ..g.clone() }.generate("t").unwrap();
    let up = w.nodes.iter().find(|n| n.name == "L0.experts.up").unwrap();
    assert!(matches!(&up.op, Op::Gemm { m: 1, count: 4, weight_dtype: Some(d), .. } if d == "mxfp4"), "{:?}", up.op);
    // 64 tokens: 128 x (1 - (124/128)^64) = 111.6, so 112 experts, ceil(256 / 112) = 3 tokens each.
    let w = Llm { batch: 64, ..g }.generate("t").unwrap();
    let up = w.nodes.iter().find(|n| n.name == "L0.experts.up").unwrap();
    assert!(matches!(&up.op, Op::Gemm { m: 3, count: 112, .. }), "{:?}", up.op);
}

#[test]
fn decode_attention_is_bound_by_the_kv_cache_read() {
    let doc = SystemDoc::open("trn3-chip").unwrap();
    let sys = doc.resolve().unwrap();
    let mut costs = SystemCosts::new(sys.chip().unwrap(), None, 0.8);
    let bw = costs.hbm_bytes_per_ns().unwrap();
    let att = |kv: u64| Op::Attention {
        batch: 16,
        heads: 64,
        seq: 1,
        kv_seq: Some(kv),
        kv_heads: Some(8),
        head_dim: 128,
        causal: false,
        dtype: "bf16".into(),
    };
    for kv in [4096u64, 32768] {
        let t = costs.compute_ns(&att(kv)).unwrap();
        let bytes = 16.0 * (2.0 * 64.0 + 2.0 * 8.0 * kv as f64) * 128.0 * 2.0;
        assert!((t / (bytes / bw) - 1.0).abs() < 1e-9, "kv {kv}: {t} ns against {} ns", bytes / bw);
    }
}

#[test]
fn serving_runs_report_ttft_tpot_and_tokens_per_second() {
    let dir = scratch("inference_serving");
    let f = |n: &str| dir.join(n).to_string_lossy().into_owned();
    let (dec, pre, json) = (f("decode.ron"), f("prefill.ron"), f("d.json"));
    let small = ["--model", "gpt-oss-20b", "--layers", "2", "--tp", "2", "--dp", "2", "--ep", "4", "--batch", "8"];
    // Every op on the cycle-level chip (the default): the prefill's prompts are short so that
    // its programs stay quick to simulate; the decode's second run reads the first's op cache.
    let gen = |mode: &str, out: &str, extra: &[&str]| {
        let context = if mode == "prefill" { "256" } else { "2048" };
        let mut a = vec!["workload", "llm", "--mode", mode, "--context", context, "-o", out];
        a.extend(small);
        a.extend(extra);
        let (code, _, err) = run(&a);
        assert_eq!(code, 0, "{err}");
    };
    gen("decode", &dec, &["--expert-weights", "bf16"]);
    gen("prefill", &pre, &["--expert-weights", "bf16"]);
    let ops = f("ops");
    let (code, out, err) =
        run(&["run", "--workload", &dec, "--system", "trn3-gen1-ultraserver", "--op-cache", &ops, "--json", &json]);
    assert_eq!(code, 0, "{err}");
    // By default every op with a shape is timed on the cycle-level chip.
    let timed = out.lines().find(|l| l.trim_start().starts_with("timed by")).expect(&out);
    for kind in ["attention cycle", "elementwise cycle", "gemm cycle"] {
        assert!(timed.contains(kind), "{kind}: {timed}");
    }
    assert!(!timed.contains("roofline"), "{timed}");
    let tpot = out.lines().find(|l| l.contains("time per output token")).expect(&out);
    let ms: f64 = tpot.split_whitespace().nth(4).unwrap().parse().unwrap();
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let fig = |k: &str| {
        v["points"][0]["figures"].as_array().unwrap().iter().find(|p| p[0] == k).map(|p| p[1].as_f64().unwrap())
    };
    let (t, chip, user) =
        (fig("tpot_ms").unwrap(), fig("tokens_per_s_per_chip").unwrap(), fig("tokens_per_s_per_user").unwrap());
    assert!((t - ms).abs() < 1e-3 && t > 0.0, "{t} {ms}");
    // 8 sequences, one token each, on 4 chips; a user gets a token per step.
    assert!((chip - 8.0 / 4.0 / (t / 1e3)).abs() / chip < 1e-9 && (user - 1e3 / t).abs() / user < 1e-9);
    assert!(fig("ttft_ms").is_none());
    // Deterministic: the same flags write the same workload, and it runs to the same bytes
    // (with its programs' times read from the op cache).
    let (dec2, json2) = (f("decode2.ron"), f("d2.json"));
    gen("decode", &dec2, &["--expert-weights", "bf16"]);
    let same = |a: &str, b: &str| std::fs::read(a).unwrap() == std::fs::read(b).unwrap();
    let (code, _, err) =
        run(&["run", "--workload", &dec, "--system", "trn3-gen1-ultraserver", "--op-cache", &ops, "--json", &json2]);
    assert_eq!(code, 0, "{err}");
    let body = |p: &str| std::fs::read_to_string(p).unwrap().replace(&dec2, &dec);
    assert!(body(&dec) == body(&dec2) && same(&json, &json2), "not byte-identical");
    let (code, out, err) =
        run(&["compare", "--workload", &pre, "--system", "trn2-ultraserver", "--system", "trn3-gen2-ultraserver"]);
    assert_eq!(code, 0, "{err}");
    for row in [
        "ttft_ms",
        "tokens_per_s_per_chip",
        "tokens_per_s_per_user",
        "kv_cache_GiB_per_rank",
        "kernel_programs_simulated",
    ] {
        let line = out.lines().find(|l| l.starts_with(row)).unwrap_or_else(|| panic!("no {row} row: {out}"));
        assert_eq!(line.split_whitespace().count(), 3, "{line}");
    }
}

#[test]
fn bad_serving_input_is_one_located_line_and_nothing_runs() {
    let dir = scratch("inference_serving_bad");
    let f = |n: &str| dir.join(n).to_string_lossy().into_owned();
    refused(&["workload", "llm", "--model", "gpt-oss-12b"], &["--model gpt-oss-12b", "did you mean `gpt-oss-120b`"]);
    refused(&["workload", "llm", "--model", "gpt-oss-120b", "--tp", "3"], &["--heads 64 must divide by --tp 3"]);
    refused(
        &["workload", "llm", "--heads", "48", "--kv-heads", "6", "--tp", "4", "--hidden", "6144"],
        &["--kv-heads 6 must divide by --tp 4"],
    );
    refused(
        &["workload", "llm", "--model", "gpt-oss-120b", "--tp", "4", "--dp", "2", "--ep", "3"],
        &["--ep 3 must divide"],
    );
    refused(
        &["workload", "llm", "--model", "gpt-oss-20b", "--tp", "1", "--dp", "64", "--ep", "64", "--batch", "64"],
        &["--experts 32 must divide by --ep 64"],
    );
    // A preset file's mistakes are located in it.
    let text = std::fs::read_to_string(root().join("models/configs/models/gpt-oss-120b.ron")).unwrap();
    let bad = f("bad-model.ron");
    std::fs::write(&bad, text.replace("layers: 36,", "layers: 0,")).unwrap();
    refused(&["workload", "llm", "--model", &bad], &[&format!("{bad}:8:5: layers:"), "0 is out of range"]);
    std::fs::write(&bad, text.replace("top_k: 4,", "topk: 4,")).unwrap();
    refused(&["workload", "llm", "--model", &bad], &["topk", "did you mean `top_k`"]);
    // An output never overwrites an input.
    let (code, _, err) = run(&["workload", "llm", "--model", &bad, "-o", &bad]);
    assert_eq!(code, 2, "{err}");
    assert!(std::fs::read_to_string(&bad).unwrap().contains("topk: 4,"), "the preset file was overwritten");
    // GPT-OSS's MXFP4 experts on Trn2, whose NC-v3 has no MXFP4: located at the node's field.
    let mx = f("mx.ron");
    let (code, _, err) =
        run(&["workload", "llm", "--model", "gpt-oss-20b", "--mode", "decode", "--tp", "1", "--batch", "1", "-o", &mx]);
    assert_eq!(code, 0, "{err}");
    refused(
        &["run", "--workload", &mx, "--system", "trn2-chip"],
        &[&format!("{mx}:"), "weight_dtype", "no mxfp4 matmul"],
    );
    refused(
        &["compare", "--workload", &mx, "--system", "trn3-chip", "--system", "trn2-chip"],
        &["weight_dtype", "no mxfp4 matmul"],
    );
    // The model over one chip's HBM; then a KV cache over it.
    let big = f("big.ron");
    let (code, _, err) = run(&[
        "workload",
        "llm",
        "--model",
        "llama-3.1-405b",
        "--mode",
        "decode",
        "--tp",
        "1",
        "--batch",
        "1",
        "-o",
        &big,
    ]);
    assert_eq!(code, 0, "{err}");
    refused(
        &["run", "--workload", &big, "--system", "trn3-chip"],
        &[&format!("{big}:"), "hbm_bytes_per_rank", "GiB", "chip trn3-chip has 144.0 GiB"],
    );
    let kv = f("kv.ron");
    let (code, _, err) = run(&[
        "workload",
        "llm",
        "--model",
        "llama-3.3-70b",
        "--mode",
        "decode",
        "--tp",
        "4",
        "--batch",
        "256",
        "--context",
        "32768",
        "-o",
        &kv,
    ]);
    assert_eq!(code, 0, "{err}");
    refused(
        &["run", "--workload", &kv, "--system", "trn3-gen1-ultraserver"],
        &["of which the KV cache 640.0 GiB", "has 144.0 GiB"],
    );
}
