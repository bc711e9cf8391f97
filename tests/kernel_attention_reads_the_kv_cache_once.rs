//! Attention as the kernel library's flash kernel (`--compute cycle`): the scores and the
//! online softmax stay in SBUF and PSUM and K and V are read from HBM once, so a decode step's
//! attention (gpt-oss-120b's: 8 sequences, 64 query heads on 8 KV heads, 2049 keys of 64)
//! takes at most 3x a plain Load of its KV cache on the same chip (measured 2.68x: each core's
//! 10 tiles are too few to fill the engines' two-deep rings, so the hand-offs between the
//! engines bound it), and the same node run twice gives the same time.

use trnsim_harness::workload::{self, Compute, Options};
use trnsim_kernels::run;
use trnsim_system::doc::SystemDoc;
use trnsim_workloads::format::parse;

#[test]
fn decode_attention_takes_at_most_3x_its_kv_caches_load() {
    let sys = SystemDoc::open("trn3-chip").unwrap().resolve().unwrap();
    let step = |op: &str| {
        let w =
            parse("op.ron", &format!("Workload(name: \"op\", ranks: 1, nodes: [Node(id: 0, name: \"n\", op: {op})])"))
                .unwrap();
        workload::run(&w, &sys, &Options { efficiency: Some(0.5), compute: Compute::Cycle, ..Default::default() })
            .unwrap()
            .report
            .step_ns
    };
    let (batch, kv_heads, keys, d) = (8u64, 8u64, 2049u64, 64u64);
    let op = format!(
        "Attention(batch: {batch}, heads: 64, seq: 1, kv_seq: Some({keys}), kv_heads: Some({kv_heads}), head_dim: {d}, dtype: \"bf16\")"
    );
    run::clear_cache();
    let att = step(&op);
    let kv = step(&format!("Load(bytes: {})", batch * kv_heads * keys * d * 2 * 2));
    assert!(att <= 3.0 * kv, "decode attention {att:.0} ns, its K and V loaded {kv:.0} ns");
    run::clear_cache();
    assert_eq!(step(&op).to_bits(), att.to_bits(), "the same node, simulated again");
}
