use super::*;

#[test]
fn built_in_presets_are_valid_and_named_as_their_files() {
    for (name, text) in BUILTIN {
        let spec = CoreSpec::from_ron(text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(&spec.name, name);
        assert_eq!(spec.validate(), Ok(()), "{name}");
        assert_eq!(spec.dma.name, *name);
    }
}

#[test]
fn the_files_hold_the_figures_the_generations_ran_on() {
    use trnsim_mem::sram::geometry::{PSUM, SBUF_NC_V2, SBUF_NC_V3, SBUF_NC_V4};
    let mhz = |s: &CoreSpec, e: Engine| s.clock(e).as_hz() / 1_000_000;
    let (v2, v3, v4) = (preset("nc-v2").unwrap(), preset("nc-v3").unwrap(), preset("nc-v4").unwrap());
    assert_eq!([mhz(&v2, Engine::Tensor), mhz(&v2, Engine::Vector), mhz(&v2, Engine::Sync)], [2800, 1120, 1400]);
    assert_eq!([mhz(&v3, Engine::Tensor), mhz(&v3, Engine::Vector), mhz(&v3, Engine::Scalar)], [2400, 960, 1200]);
    assert_eq!([mhz(&v4, Engine::Tensor), mhz(&v4, Engine::Vector), mhz(&v4, Engine::GpSimd)], [2400, 1200, 1200]);
    for s in [&v2, &v3, &v4] {
        assert_eq!(s.clocks.mem.as_hz(), 2_400_000_000);
        assert_eq!(s.psum, PSUM.geometry);
        assert_eq!(s.semaphores, SemSpec { count: 64, latency_cycles: 4 });
    }
    assert_eq!([v2.sbuf, v3.sbuf, v4.sbuf], [SBUF_NC_V2.geometry, SBUF_NC_V3.geometry, SBUF_NC_V4.geometry]);
    assert_eq!([v2.dma.clone(), v3.dma.clone(), v4.dma.clone()], [DmaParams::v2(), DmaParams::v3(), DmaParams::v4()]);
}

#[test]
fn peak_rates_are_the_documented_per_core_figures() {
    let v4 = nc_v4();
    let tf = |r: Option<Rate>| v4.peak_flops(r.unwrap()) / 1e12;
    let f = v4.tensor.formats;
    assert!((tf(f.bf16) - 78.64).abs() < 0.01);
    assert!((tf(f.fp32) - 19.66).abs() < 0.01);
    assert!((tf(f.mxfp8) - 314.57).abs() < 0.01);
    assert!((tf(f.mxfp4) - 314.57).abs() < 0.01);
    let v5 = preset("nc-v5").unwrap();
    assert_eq!(v5.peak_flops(v5.tensor.formats.mxfp4.unwrap()), 2.0 * v4.peak_flops(f.mxfp4.unwrap()));
    let v3 = preset("nc-v3").unwrap();
    assert!(v3.tensor.formats.mxfp8.is_none());
    // NC-v3's double-row FP8: 158 TFLOPS per core (spec §2), twice its BF16.
    assert!((v3.peak_flops(v3.tensor.formats.fp8e4m3.unwrap()) / 1e12 - 157.29).abs() < 0.01);
}

/// A change to a valid core that makes it invalid.
type Change = Box<dyn Fn(&mut CoreSpec)>;

#[test]
fn validation_names_the_field() {
    let base = (*nc_v4()).clone();
    let cases: Vec<(Change, &str)> = vec![
        (Box::new(|s| s.tensor.rows = 0), "tensor.rows"),
        (Box::new(|s| s.tensor.columns = 130), "tensor.columns"),
        (Box::new(|s| s.tensor.min_interval = 0), "tensor.min_interval"),
        (Box::new(|s| s.tensor.formats.bf16 = None), "tensor.formats.bf16"),
        (
            Box::new(|s| s.tensor.formats.fp32 = Some(Rate { macs_per_pe: 1, cycles_per_column: 0 })),
            "tensor.formats.fp32.cycles_per_column",
        ),
        (
            Box::new(|s| s.tensor.formats.mxfp8 = Some(Rate { macs_per_pe: 65, cycles_per_column: 1 })),
            "tensor.formats.mxfp8.macs_per_pe",
        ),
        (Box::new(|s| s.clocks.vector = Frequency::from_hz(0)), "clocks.vector"),
        (
            Box::new(|s| {
                (s.sbuf.partition_bytes, s.sbuf.banks, s.sbuf.bank_interleave_bytes) = (128, 1, 128);
            }),
            "sbuf.partition_bytes",
        ),
        (Box::new(|s| s.sbuf.partitions = 256), "sbuf.partitions"),
        (Box::new(|s| s.psum.banks = 0), "psum.banks"),
        (Box::new(|s| s.dma.partitions_per_engine = 4), "dma.partitions_per_engine"),
        (Box::new(|s| s.dma.queues = 0), "dma.queues"),
        (Box::new(|s| s.dma.engines = u32::MAX), "dma"),
        (Box::new(|s| s.semaphores.count = 0), "semaphores.count"),
        (Box::new(|s| s.semaphores.latency_cycles = 0), "semaphores.latency_cycles"),
        (Box::new(|s| s.costs.control_cycles = 0), "costs.control_cycles"),
        (
            Box::new(|s| s.costs.tensor.load_stationary_columns_per_cycle = 0),
            "costs.tensor.load_stationary_columns_per_cycle",
        ),
        (
            Box::new(|s| s.costs.tensor.load_stationary_columns_per_cycle = 129),
            "costs.tensor.load_stationary_columns_per_cycle",
        ),
        (Box::new(|s| s.costs.tensor.transpose_free_cap = 0), "costs.tensor.transpose_free_cap"),
        (Box::new(|s| s.costs.vector.latency_cycles = 1_000_001), "costs.vector.latency_cycles"),
        (Box::new(|s| s.costs.vector.tensor_copy.elements = 0), "costs.vector.tensor_copy.elements"),
        (Box::new(|s| s.costs.vector.memset.cycles = 1025), "costs.vector.memset.cycles"),
        (Box::new(|s| s.costs.scalar.activation.min_interval = u64::MAX), "costs.scalar.activation.min_interval"),
        (Box::new(|s| s.costs.gpsimd.data.overhead = 2_000_000), "costs.gpsimd.data.overhead"),
    ];
    for (change, field) in cases {
        let mut s = base.clone();
        change(&mut s);
        assert_eq!(s.validate().map_err(|e| e.field), Err(field.to_string()));
    }
}

#[test]
fn a_format_entry_cannot_be_left_out_or_misspelt() {
    let text = BUILTIN[2].1;
    let missing = text.replace("            fp16: Some((macs_per_pe: 1, cycles_per_column: 1)),\n", "");
    assert!(
        CoreSpec::from_ron(&missing).unwrap_err().contains("fp16"),
        "{}",
        CoreSpec::from_ron(&missing).unwrap_err()
    );
    let unknown = text.replace("rows: 128", "rowz: 128");
    assert!(CoreSpec::from_ron(&unknown).unwrap_err().contains("rowz"));
    let json = serde_json::to_string(&*nc_v4()).unwrap();
    assert_eq!(serde_json::from_str::<CoreSpec>(&json).unwrap(), *nc_v4());
}
